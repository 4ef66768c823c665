"""What a person watching `scout chat` sees while job_wait rides out a dropped connection: the
job's bar leaves with a line saying its state is unknown and that the wait is retrying, the
bar comes back once its host answers, and the job's end is printed."""

from __future__ import annotations

import asyncio
import io
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from rich.console import Console

from agent.faces.chat import _send
from agent.faces.chat_view import ChatView
from agent.runtime.builder import open_runtime
from agent.runtime.settings import Settings
from agent.standin.server import MessagesAPIServer
from sim.cluster import SimCluster
from tests.support.job_kit import SMALL_MODEL, JobDesk, empty_pair
from tests.support.session_kit import sdk_client, text_turn, tool_turn
from tests.support.waiting import until
from tools.ssh import Inventory, SSHPool

pytestmark = pytest.mark.slow

WAIT = {"hosts": ["spark-b"], "names": ["weights"], "timeout": 120}
KEY = "spark-b/weights"


@pytest.fixture
async def cluster(tmp_path: Path) -> AsyncIterator[SimCluster]:
    # 16 GB at 100 MB/s, 10x faster than real: about 16 s, long enough to outlast the outage
    async with SimCluster(empty_pair(time_scale=10), tmp_path / "sim") as running:
        yield running


async def test_the_chat_shows_a_wait_retrying_through_a_dropped_connection(
    cluster: SimCluster, tmp_path: Path
) -> None:
    inventory_path = cluster.write_inventory(tmp_path / "inv" / "inventory.yaml")
    async with SSHPool(Inventory.load(inventory_path)) as pool:
        await JobDesk(pool, tmp_path / "spill").call(
            "job_start", name="weights", command=f"hf download {SMALL_MODEL}", hosts=["spark-b"]
        )
    out = io.StringIO()
    view = ChatView(Console(file=out, width=500, color_system=None))
    settings = Settings(
        api_key="test", inventory=inventory_path, transcripts_dir=tmp_path / "t",
        log_file=tmp_path / "scout.log",
    )  # fmt: skip
    script = [tool_turn([("toolu_1", "job_wait", WAIT)]), text_turn("The weights are in.")]
    with MessagesAPIServer(script) as api:
        client = sdk_client(api.url)
        runtime = await open_runtime(
            settings, client=client, approver_factory=lambda rules: None, listeners=[view]
        )
        try:
            sending = asyncio.create_task(_send(runtime, view, "wait for the weights"))
            await until(lambda: KEY in view.jobs.running)  # its bar, from the first poll
            cluster.inject("spark-a", down=True)  # the head: the worker is reached through it
            await until(lambda: "state unknown" in out.getvalue())
            assert KEY not in view.jobs.running
            cluster.inject("spark-a", down=False)
            await until(lambda: KEY in view.jobs.running)  # back, from a poll that got through
            await sending
        finally:
            await runtime.aclose()
            await client.close()

    shown = out.getvalue().splitlines()
    unknown = next(i for i, line in enumerate(shown) if f"? job {KEY}: state unknown (" in line)
    assert (
        "; retrying until the wait's timeout (the jobs keep running on the host))"
        in (shown[unknown])
    )
    assert any(f"✓ job {KEY} exited 0" in line for line in shown[unknown + 1 :])
    assert runtime.world.jobs[KEY].state == "exited"
