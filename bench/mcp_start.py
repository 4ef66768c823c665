"""Start-up of `scout mcp`: from spawning it to its answer to `server/discover` (goal: < 0.5 s).

Spawns `scout mcp --sim fresh-pair` (the simulator opens only with the first tool call, so
none starts here) several times, writes the SDK client's discovery request on its stdin and
times the answer line on its stdout. Beside it, the same with a discovery request the early
answer leaves to the SDK (its client names a title too), which pays the SDK's import first,
and a bare interpreter, the floor. Prints the medians, the ratio early / SDK, and last
`scout mcp start: N ms`.

    .venv/bin/python bench/mcp_start.py [--reps 7]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from agent.mcp.discovery import CLIENT_INFO_KEY, discovery_request  # noqa: E402


def scout_mcp() -> list[str]:
    beside = Path(sys.executable).with_name("scout")
    if beside.exists():
        return [str(beside), "mcp", "--sim", "fresh-pair"]
    found = shutil.which("scout")
    base = [found] if found else [sys.executable, "-m", "agent.faces.cli"]
    return [*base, "mcp", "--sim", "fresh-pair"]


def answered_in_s(command: list[str], request: bytes, env: dict[str, str]) -> float:
    """Seconds from spawn to the first line on stdout (the answer), then the server is closed."""
    started = time.perf_counter()
    process = subprocess.Popen(
        command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, env=env
    )
    assert process.stdin is not None and process.stdout is not None
    process.stdin.write(request + b"\n")
    process.stdin.flush()
    answer = process.stdout.readline()
    elapsed = time.perf_counter() - started
    process.stdin.close()
    process.wait(timeout=60)
    if b'"supportedVersions"' not in answer:
        raise SystemExit(f"no discovery answer: {answer[:300]!r}")
    return elapsed


def median_ms(command: list[str], request: bytes, env: dict[str, str], reps: int) -> float:
    return 1000 * statistics.median(answered_in_s(command, request, env) for _ in range(reps))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reps", type=int, default=7)
    args = parser.parse_args()
    early = json.loads(discovery_request("2026-07-28"))
    early["params"]["_meta"][CLIENT_INFO_KEY] = {"name": "bench", "version": "1"}
    left_to_sdk = json.loads(json.dumps(early))
    left_to_sdk["params"]["_meta"][CLIENT_INFO_KEY]["title"] = "Bench"
    with tempfile.TemporaryDirectory(prefix="scout-bench-mcp-") as home:
        env = {**os.environ, "SCOUT_HOME": home, "PYTHONPATH": str(ROOT)}
        floor_ms = 1000 * statistics.median(
            _timed([sys.executable, "-c", "pass"]) for _ in range(args.reps)
        )
        sdk_ms = median_ms(scout_mcp(), json.dumps(left_to_sdk).encode(), env, args.reps)
        start_ms = median_ms(scout_mcp(), json.dumps(early).encode(), env, args.reps)
    load = " ".join(f"{x:.2f}" for x in os.getloadavg())
    print(f"load average: {load} ({os.cpu_count()} cores)")
    print(f"bare interpreter: {floor_ms:.0f} ms")
    print(f"discovery answered by the SDK (imported first): {sdk_ms:.0f} ms")
    print(f"early / SDK: {start_ms / sdk_ms:.2f}")
    print(f"scout mcp start: {start_ms:.0f} ms")


def _timed(command: list[str]) -> float:
    started = time.perf_counter()
    subprocess.run(command, check=True)
    return time.perf_counter() - started


if __name__ == "__main__":
    main()
