"""`/jobs` in `scout chat` in a real terminal (tmux): before any job, it says there is none;
after the model read a job's status, it lists the job: host, name, state, progress, command."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from agent.standin.server import MessagesAPIServer
from sim.cluster import SimCluster
from tests.support.job_kit import SMALL_MODEL, JobDesk, empty_pair
from tests.support.session_kit import text_turn, tool_turn
from tests.support.tmux import TmuxScreen, tmux_missing
from tools.ssh import Inventory, SSHPool

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(tmux_missing() is not None, reason=tmux_missing() or ""),
]

DOWNLOAD = f"hf download {SMALL_MODEL}"
SCRIPT = [
    tool_turn([("toolu_1", "job_status", {"hosts": ["spark-b"], "names": ["weights"]})]),
    text_turn("The download on spark-b is still running."),
]


def table_rows(text: str) -> list[dict[str, str]]:
    """The rows of the first table in `text`, each cell's folded lines joined again."""
    lines = [line.strip() for line in text.splitlines()]
    head = next(i for i, line in enumerate(lines) if line.startswith("┃"))
    columns = [cell.strip() for cell in lines[head].strip("┃").split("┃")]
    rows: list[dict[str, str]] = []
    for line in lines[head + 2 :]:
        if not line.startswith("│"):
            break
        cells = [cell.strip() for cell in line.strip("│").split("│")]
        if cells[0]:  # a row starts with its host; a folded cell goes on below
            rows.append(dict(zip(columns, cells, strict=True)))
            continue
        for column, cell in zip(columns, cells, strict=True):
            rows[-1][column] = f"{rows[-1][column]} {cell}".strip()
    return rows


async def test_slash_jobs_lists_the_job_the_session_read(tmp_path: Path) -> None:
    # 16 GB at 100 MB/s in real time: the download runs through the whole test
    async with SimCluster(empty_pair(time_scale=1), tmp_path / "sim") as sim:
        inventory = sim.write_inventory(tmp_path / "sim" / "inventory.yaml")
        async with SSHPool(Inventory.load(inventory)) as pool:  # started before this session
            await JobDesk(pool, tmp_path / "spill").call(
                "job_start", name="weights", command=DOWNLOAD, hosts=["spark-b"]
            )
        with MessagesAPIServer(SCRIPT) as api:
            screen = TmuxScreen(tmp_path / "tmux.sock", width=160, height=40)
            screen.start_chat(tmp_path / "home", api.url, inventory)
            try:
                await screen.wait_for("scout ›")
                screen.send("/jobs", "Enter")
                await screen.wait_for("no jobs in this session yet")
                screen.send("how is the download on the worker?", "Enter")
                await screen.wait_for("still running.")
                mark = len(screen.screen().rstrip())
                screen.send("/jobs", "Enter")
                shown = (await screen.wait_for("└", after=mark))[mark:]
                [row] = table_rows(shown)
                assert row["host"] == "spark-b" and row["job"] == "weights", shown
                assert row["state"].startswith("running ") and row["command"] == DOWNLOAD, shown
                assert re.match(r"\d/5 files, [0-9.]+[MG]/16G ", row["progress"]), shown
                screen.send("C-d")
                await screen.wait_for("transcript saved")
            finally:
                screen.kill()
