"""The wall's cost per call: one read on a warm pooled connection, inside the wall and without.

Starts one OpenSSH sshd on 127.0.0.1 (bench/ssh_fanout.py's farm; root, so the wall also cuts
root's powers), opens the connection, leaves the helper on the host with a first walled call
(which also starts the connection's wall fork-server, tools/wall/host_server.py: its time is
printed, paid once per connection), then alternates an unwalled and a walled `cat
/proc/loadavg` and prints the medians; last line:
`wall per call: +X ms (goal <= 30 ms), walled/unwalled: R`.

    .venv/bin/python bench/wall.py [--reps 41]
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.ssh_fanout import SSHD, SshdFarm
from tools.ssh import SSHPool
from tools.wall import WallSpec

COMMAND = "cat /proc/loadavg"
GOAL_MS = 30.0


async def measure(farm: SshdFarm, reps: int) -> tuple[float, float]:
    async with SSHPool(farm.inventory()) as pool:
        host = pool.inventory.names()[0]
        started = time.perf_counter()
        first = await pool.run(host, COMMAND, wall=WallSpec(scratch=True))  # installs the helper
        if not first.walled:
            raise SystemExit(f"the wall could not be built here: {first.unwalled}")
        started = time.perf_counter() - started
        print(f"first walled call (helper installed, fork-server started): {started * 1000:.1f} ms")
        bare, walled = [], []
        for _ in range(reps):
            for wall, times in ((None, bare), (WallSpec(scratch=True), walled)):
                started = time.perf_counter()
                result = await pool.run(host, COMMAND, wall=wall)
                times.append(time.perf_counter() - started)
                if not result.ok:
                    raise SystemExit(f"{COMMAND} failed: {result.stderr}")
    print(f"fastest: unwalled {min(bare) * 1000:.1f} ms, walled {min(walled) * 1000:.1f} ms")
    return statistics.median(bare), statistics.median(walled)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reps", type=int, default=41)
    args = parser.parse_args()
    if not Path(SSHD).exists():
        print("bench/wall.py needs OpenSSH sshd (apt-get install openssh-server)", file=sys.stderr)
        return 2
    with tempfile.TemporaryDirectory(prefix="scout-bench-wall-") as tmp:
        farm = SshdFarm(Path(tmp), 1)
        try:
            bare, walled = asyncio.run(measure(farm, args.reps))
        finally:
            farm.stop()
    added_ms = (walled - bare) * 1000
    print(f"unwalled {bare * 1000:.1f} ms, walled {walled * 1000:.1f} ms per call (median)")
    print(
        f"wall per call: +{added_ms:.1f} ms (goal <= {GOAL_MS:g} ms), walled/unwalled: "
        f"{walled / bare:.2f}"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
