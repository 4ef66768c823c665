"""The acceptance of issue 13's crash path, as a user meets it: a real `scout run` process
(the real anthropic SDK against the local Messages-API server, the simulated pair over SSH,
approvals from a real signed webhook) starts a download as a job and waits on it; the test
kills that process with SIGKILL mid-download; `scout run --resume` then finds the job on its
host, says whether it finished while Scout was away or still runs (with its progress), waits
on it to the end, and the download ran exactly once."""

from __future__ import annotations

import asyncio
import io
import json
import os
import signal
import sys
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
from rich.console import Console

from agent.faces.chat import _send
from agent.faces.chat_view import ChatView
from agent.loop.events import JobEvent
from agent.loop.resumed import KnownJob, RebuiltSession
from agent.runtime.builder import open_runtime
from agent.runtime.reattach import reattach_jobs
from agent.runtime.settings import Settings
from agent.standin.server import MessagesAPIServer
from agent.world.job_events import job_event_listener
from agent.world.model import WorldModel
from sim.cluster import SimCluster
from tests.support.example_receiver import receiver, serving
from tests.support.job_kit import MODEL, JobDesk, empty_pair
from tests.support.plans import one_step_plan
from tests.support.session_kit import sdk_client, text_turn, tool_turn
from tools.ssh import Inventory, SSHPool

REPO = Path(__file__).parents[2]
SECRET = "webhook-secret-for-the-jobs-resume-test-0123"
DOWNLOAD = f"hf download {MODEL}"
PLAN = one_step_plan(
    f"serve {MODEL} across both Sparks",
    title="download the weights on the worker",
    host="spark-b",
    actions=[DOWNLOAD],
    rollback=f"hf cache delete {MODEL}",
    success_check="the snapshot is complete in the HF cache",
).model_dump()
RULES = "approve:\n  - {tool: propose_plan}\n  - {tool: job_start}\n"
START = {"name": "weights", "command": DOWNLOAD, "hosts": ["spark-b"]}
WAIT = {"hosts": ["spark-b"], "names": ["weights"], "timeout": 600}


@pytest.fixture
async def cluster(tmp_path: Path) -> AsyncIterator[SimCluster]:
    # 119 GB at 100 MB/s, 100x faster than real: about 12 s, long enough to be killed midway
    async with SimCluster(empty_pair(time_scale=100), tmp_path / "sim") as running:
        yield running


def scout_env(tmp_path: Path, api_url: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("SCOUT_", "ANTHROPIC_"))}
    env.update(
        ANTHROPIC_API_KEY="test",
        ANTHROPIC_BASE_URL=api_url,
        SCOUT_HOME=str(tmp_path / "home"),
        SCOUT_TEST_HOOK_SECRET=SECRET,
    )
    return env


async def scout_run(*args: str, env: dict[str, str]) -> asyncio.subprocess.Process:
    return await asyncio.create_subprocess_exec(
        sys.executable, "-m", "agent.faces.cli", "run", *args,
        cwd=REPO, env=env, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE,
    )  # fmt: skip


async def events_until(
    process: asyncio.subprocess.Process, wanted: Any, timeout: float = 90
) -> list[dict[str, Any]]:
    """JSON events from the process's stdout until one satisfies `wanted`."""
    assert process.stdout is not None
    seen: list[dict[str, Any]] = []
    async with asyncio.timeout(timeout):
        while True:
            line = await process.stdout.readline()
            if not line:
                stderr = await process.stderr.read() if process.stderr else b""
                raise AssertionError(f"scout run ended early: {stderr.decode()[-3000:]}\n{seen}")
            seen.append(json.loads(line))
            if wanted(seen[-1]):
                return seen


def midway(event: dict[str, Any]) -> bool:
    fraction = event.get("fraction")
    return event["type"] == "job" and fraction is not None and 0 < fraction < 1


@pytest.mark.slow
async def test_a_killed_scout_run_resumes_and_finds_its_download_job(
    cluster: SimCluster, tmp_path: Path
) -> None:
    inventory = str(cluster.write_inventory(tmp_path / "inv" / "inventory.yaml"))
    rules = tmp_path / "rules.yaml"
    rules.write_text(RULES)
    hook = receiver.make_server(
        "127.0.0.1", 0, SECRET.encode(), receiver.RulesDecider.from_file(rules), log=io.StringIO()
    )
    first_script = [
        tool_turn([("toolu_1", "propose_plan", PLAN)]),
        tool_turn([("toolu_2", "job_start", START)]),
        tool_turn([("toolu_3", "job_wait", WAIT)], text="Waiting for the weights."),
        text_turn("never reached: the process is killed while it waits"),
    ]
    with MessagesAPIServer(first_script) as api, serving(hook) as hook_url:
        scout = await scout_run(
            "--goal", "download the weights to spark-b", "--inventory", inventory,
            "--approvals", "webhook", "--webhook-url", hook_url,
            "--webhook-secret-env", "SCOUT_TEST_HOOK_SECRET",
            env=scout_env(tmp_path, api.url),
        )  # fmt: skip
        before = await events_until(scout, midway)
        scout.send_signal(signal.SIGKILL)
        assert await scout.wait() == -signal.SIGKILL

    jobs_before = [e for e in before if e["type"] == "job"]
    assert jobs_before[0]["kind"] == "start" and jobs_before[0]["command"] == DOWNLOAD
    assert "/14 files" in jobs_before[-1]["progress"]  # progress reached stdout, then the kill
    transcript = next((tmp_path / "home" / "transcripts").glob("*.jsonl"))

    second_script = [
        tool_turn([("toolu_9", "job_wait", WAIT)], text="Following the download again."),
        text_turn("The weights are complete on spark-b."),
    ]
    with MessagesAPIServer(second_script) as api:
        resumed = await scout_run(
            "--resume", str(transcript), "--inventory", inventory,
            env=scout_env(tmp_path, api.url),
        )  # fmt: skip
        out, err = await asyncio.wait_for(resumed.communicate(), 120)
        posts = [r.body for r in api.requests if r.path == "/v1/messages"]

    assert resumed.returncode == 0, err.decode()[-3000:]
    events = [json.loads(line) for line in out.decode().splitlines()]
    report = next(e for e in events if e["type"] == "notice" and e["kind"] == "jobs_resumed")
    found = next(e for e in events if e["type"] == "job")
    if found["kind"] == "found":  # still running when Scout came back: re-attached
        assert found["state"] == "running"
        assert "Still running (re-attached" in report["message"]
        assert "== spark-b/weights: running " in report["message"]
    else:  # it finished while Scout was away
        assert found["kind"] == "end" and found["exit_code"] == 0
        assert (
            "Finished while Scout was away:\n== spark-b/weights: exited 0 after"
            in (report["message"])
        )
    assert "/14 files" in found["progress"] and "/14 files" in report["message"]
    end = [e for e in events if e["type"] == "job"][-1]
    assert (end["kind"], end["state"], end["exit_code"]) == ("end", "exited", 0)
    # the model reads the same report before anything else of the resumed session
    first_user = posts[0]["messages"][-1]["content"]
    said = " ".join(b.get("text", "") for b in first_user if b.get("type") == "text")
    assert said.startswith("Jobs of the resumed session, read on their hosts just now:")
    # the download ran once, never restarted by the resume
    assert cluster.host_state("spark-b")["hf_cache"][MODEL] == {"size_gb": 119.0}
    log = next(cluster.host_dir("spark-b").rglob(".scout/jobs/weights/log")).read_text()
    assert log.count("Download complete") == 1


async def test_a_resume_reports_the_jobs_of_an_unreachable_host_as_unknown(
    cluster: SimCluster, tmp_path: Path
) -> None:
    inventory = Inventory.load(cluster.write_inventory(tmp_path / "inv" / "inventory.yaml"))
    known = {
        "spark-a/nap": KnownJob("spark-a", "nap", "sleep 300"),
        "spark-b/nap": KnownJob("spark-b", "nap", "sleep 300"),
        "spark-a/done": KnownJob("spark-a", "done", "true", state="exited"),  # not asked again
    }
    events: list[JobEvent] = []
    world = WorldModel(on_job=job_event_listener(events.append))
    async with SSHPool(inventory) as pool:
        desk = JobDesk(pool, tmp_path / "spill")
        started = await desk.call("job_start", name="nap", command="sleep 300", hosts=["spark-a"])
        assert not started.is_error, started.text
        cluster.inject("spark-b", down=True)  # the head refuses to forward to the worker

        report = await reattach_jobs(pool, world, known)
        await desk.call("job_stop", hosts=["spark-a"], names=["nap"], grace=1)

    assert report is not None
    assert "Still running (re-attached; job_wait or job_status follows them):\n" in report
    assert "== spark-a/nap: running " in report
    assert "Not reachable (the jobs may still run; ask again later):\n" in report
    assert "spark-b: nap: state unknown, spark-b did not answer (" in report
    assert "== spark-b/nap" not in report and "spark-a/done" not in report  # no verdict on it
    assert [(e.host, e.kind, e.state) for e in events] == [
        ("spark-a", "found", "running"),
        ("spark-b", "unknown", "unknown"),
    ]
    assert world.jobs["spark-b/nap"].state == "unknown"


async def test_chat_resume_shows_a_job_that_finished_while_scout_was_away(
    cluster: SimCluster, tmp_path: Path
) -> None:
    inventory_path = cluster.write_inventory(tmp_path / "inv" / "inventory.yaml")
    async with SSHPool(Inventory.load(inventory_path)) as pool:
        desk = JobDesk(pool, tmp_path / "spill")
        await desk.call("job_start", name="short", command="echo fetched; exit 3",
                        hosts=["spark-a"])  # fmt: skip
        await desk.call("job_wait", hosts=["spark-a"], names=["short"], timeout=30)
    resume = RebuiltSession(session_id="earlier", model="claude-test")
    resume.jobs["spark-a/short"] = KnownJob("spark-a", "short", "echo fetched; exit 3")
    out = io.StringIO()
    console = Console(file=out, width=160, color_system=None)
    view = ChatView(console)
    settings = Settings(
        api_key="test", inventory=inventory_path, transcripts_dir=tmp_path / "t",
        log_file=tmp_path / "scout.log",
    )  # fmt: skip
    with MessagesAPIServer([text_turn("The short job failed with exit 3.")]) as api:
        client = sdk_client(api.url)
        runtime = await open_runtime(
            settings, client=client, approver_factory=lambda rules: None, listeners=[view],
            resume=resume,
        )  # fmt: skip
        try:
            await _send(runtime, view, runtime.with_resume_note("what happened?"))
        finally:
            await runtime.aclose()
            await client.close()
        posts = [r.body for r in api.requests if r.path == "/v1/messages"]

    shown = out.getvalue()
    assert "✗ job spark-a/short exited 3 after" in shown  # the end, as the chat prints it
    assert "Finished while Scout was away:" in shown and "fetched" in shown
    said = posts[0]["messages"][-1]["content"]
    said = said if isinstance(said, str) else " ".join(b.get("text", "") for b in said)
    assert said.startswith("Jobs of the resumed session, read on their hosts just now:")
    assert "== spark-a/short: exited 3 after" in said and said.endswith("what happened?")
    assert runtime.world.jobs["spark-a/short"].exit_code == 3
