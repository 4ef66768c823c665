"""Tools for the hostile-input suite: a heartbeat that proves the event loop kept running, and a
runner that measures a case's peak memory in a process of its own."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from types import TracebackType
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
BEAT_S = 0.02


@dataclass
class Heartbeat:
    """Ticks every BEAT_S while a case runs: a blocked loop shows as few ticks and a long gap."""

    ticks: int = 0
    longest_gap_s: float = 0.0
    _task: asyncio.Task[None] | None = field(default=None, repr=False)

    async def _beat(self) -> None:
        last = time.monotonic()
        while True:
            await asyncio.sleep(BEAT_S)
            now = time.monotonic()
            self.ticks += 1
            self.longest_gap_s = max(self.longest_gap_s, now - last)
            last = now

    async def __aenter__(self) -> Heartbeat:
        self._task = asyncio.create_task(self._beat())
        await asyncio.sleep(0)
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        assert self._task is not None
        if self.ticks == 0 and not self._task.done():  # a case quicker than one beat: wait one
            await asyncio.sleep(BEAT_S * 2)
        self._task.cancel()
        await asyncio.gather(self._task, return_exceptions=True)

    def assert_kept_ticking(self, max_gap_s: float = 2.0) -> None:
        """The loop never stood still for `max_gap_s` (a blocked loop misses every beat)."""
        assert self.ticks > 0, "the event loop never ran the heartbeat"
        assert self.longest_gap_s < max_gap_s, (
            f"the event loop stood still for {self.longest_gap_s:.1f} s"
        )


# The process's own high-water mark: VmHWM belongs to the memory map exec made, while
# ru_maxrss also remembers the (test runner's) memory the process was forked from.
_USAGE = """
import json as _json, resource as _resource
_hwm = next(l for l in open("/proc/self/status") if l.startswith("VmHWM:"))
print(_json.dumps({
    "peak_rss_mb": int(_hwm.split()[1]) / 1024,
    "children_peak_rss_mb": _resource.getrusage(_resource.RUSAGE_CHILDREN).ru_maxrss / 1024,
}))
"""


def run_measured(code: str, timeout_s: float = 240) -> dict[str, Any]:
    """Run `code` (which must print one JSON object as its last line) in a fresh interpreter;
    returns that object plus `peak_rss_mb` (the process's peak resident memory) and
    `children_peak_rss_mb` (an upper bound for the processes it started and waited for: each
    one's peak, or this process's own at the moment it started them, whichever is larger)."""
    wrapper = code + "\n" + _USAGE
    done = subprocess.run(
        [sys.executable, "-c", wrapper],
        capture_output=True,
        text=True,
        timeout=timeout_s,
        cwd=ROOT,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
    )
    assert done.returncode == 0, done.stderr[-3000:]
    *lines, usage = done.stdout.strip().splitlines()
    return {**json.loads(lines[-1]), **json.loads(usage)}
