"""An engine that wedges under sustained concurrent load, as two Sparks with NCCL builds that
differ do (vLLM issue #41725): after some minutes of 4-way load one rank sits in a collective the
other never entered, every stream stops mid-answer, /health still answers, and the log shows
vLLM's shared-memory broadcast warning and torch's NCCL watchdog.

The simulator cannot wait 20 minutes, so the wedge comes after `after` requests served while
`concurrency` or more were in flight (the scenario's `generation.stall_after` and
`stall_concurrency`). From then on no stream gets another token; the lines go to the engine
container's log (what `docker logs` reads), once.
"""

from __future__ import annotations

import asyncio
import time
from pathlib import Path

# vLLM's shm_broadcast warning and torch's ProcessGroupNCCL watchdog, as issue #41725 and #42354
# quote them
LOG_LINES = (
    "(EngineCore_DP0 pid=412) WARNING {stamp} [shm_broadcast.py:466] No available shared memory "
    "broadcast block found in 60 seconds. This typically happens when some processes are hanging "
    "or doing some time-consuming work (e.g. compilation, weight/kv cache quantization).",
    "(Worker_TP1 pid=598) [rank1]:[E{md} {hms}.{us} ProcessGroupNCCL.cpp:685] [Rank 1] Watchdog "
    "caught collective operation timeout: WorkNCCL(SeqNum=12590, OpType=_ALLGATHER_BASE, "
    "NumelIn=1404928, NumelOut=2809856, Timeout(ms)=600000) ran for 600060 milliseconds before "
    "timing out.",
)


class Stall:
    """Counts the requests served under load; `wedged` once the count is reached."""

    def __init__(self, after: int | None, concurrency: int, log: Path | None) -> None:
        self.after, self.concurrency, self.log = after, concurrency, log
        self.served_under_load = 0
        self.wedged = False

    def served(self, in_flight: int) -> None:
        """One request finished while `in_flight` (itself included) were being served."""
        if self.after is None or in_flight < self.concurrency:
            return
        self.served_under_load += 1
        if self.served_under_load >= self.after and not self.wedged:
            self.wedged = True
            self._write_log()

    async def gate(self) -> None:
        """Returns at once while the engine runs; never, once it is wedged."""
        if self.wedged:
            await asyncio.Event().wait()

    def _write_log(self) -> None:
        if self.log is None:
            return
        now = time.time()
        local = time.localtime(now)
        fields = {
            "stamp": time.strftime("%m-%d %H:%M:%S", local),
            "md": time.strftime("%m%d", local),
            "hms": time.strftime("%H:%M:%S", local),
            "us": f"{int(now % 1 * 1e6):06d}",
        }
        self.log.parent.mkdir(parents=True, exist_ok=True)
        with self.log.open("a") as out:
            out.writelines(line.format(**fields) + "\n" for line in LOG_LINES)
