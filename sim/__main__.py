"""`python -m sim SCENARIO [--dir DIR] [--size N]`: serve a simulated cluster until Ctrl-C."""

from __future__ import annotations

import argparse
import asyncio
import sys
import tempfile
from pathlib import Path

from sim.cluster import SimCluster
from sim.fleet import fleet
from sim.scenario import ScenarioError, list_scenarios, load_scenario


async def _serve(scenario: str, out_dir: Path, size: int | None) -> None:
    loaded = load_scenario(scenario)
    if size is not None:
        loaded = fleet(loaded, size)
    async with SimCluster(loaded, out_dir / "sim") as cluster:
        inventory = cluster.write_inventory(out_dir / "inventory.yaml")
        print(f"Simulated cluster '{cluster.scenario.name}' is up.")
        print(
            f"  head {cluster.head}: ssh -p {cluster.head_port} -i {out_dir / 'id_ed25519'} "
            f"-o UserKnownHostsFile={out_dir / 'known_hosts'} {cluster.scenario.user}@127.0.0.1"
        )
        print(f"  inventory: {inventory}")
        print(f"  try: {_scout_command()} recon --inventory {inventory}")
        print("Press Ctrl-C to stop.", flush=True)
        await asyncio.Event().wait()


def _scout_command() -> str:
    """`scout` by its full path when it sits beside this Python (a venv not yet on PATH)."""
    beside = Path(sys.executable).with_name("scout")
    return str(beside) if beside.is_file() else "scout"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m sim", description=__doc__)
    parser.add_argument("scenario", help=f"one of: {', '.join(list_scenarios())}, or a YAML path")
    parser.add_argument("--dir", type=Path, help="where to write inventory, keys and host folders")
    parser.add_argument(
        "--size", type=int, help="N hosts: the head plus N-1 copies of the first worker"
    )
    args = parser.parse_args(argv)
    out_dir = (args.dir or Path(tempfile.mkdtemp(prefix="scout-sim-"))).resolve()
    out_dir.mkdir(parents=True, exist_ok=True)
    try:
        asyncio.run(_serve(args.scenario, out_dir, args.size))
    except ScenarioError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("\nStopped.")
    return 0


if __name__ == "__main__":
    sys.exit(main())
