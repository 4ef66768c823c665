"""A Scout-like process for crash tests: start a download as a job through the executor, say so,
then wait on it (as the agent would) until the test kills this process.

    python -m tests.support.job_starter INVENTORY SPILL_DIR
"""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path

from tests.support.job_kit import MODEL, JobDesk
from tools.ssh import Inventory, SSHPool


async def main(inventory: Path, spill: Path) -> int:
    async with SSHPool(Inventory.load(inventory)) as pool:
        desk = JobDesk(pool, spill)
        started = await desk.call(
            "job_start", name="weights", command=f"hf download {MODEL}", hosts=["spark-b"]
        )
        print("started" if not started.is_error else f"failed: {started.text}", flush=True)
        await desk.call("job_wait", hosts=["spark-b"], names=["weights"], timeout=600)
    return 0


if __name__ == "__main__":
    sys.exit(asyncio.run(main(Path(sys.argv[1]), Path(sys.argv[2]))))
