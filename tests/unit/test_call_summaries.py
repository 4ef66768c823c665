"""A call's row reads as words: a tool without its own summary shows its input as `field value`
pairs (never raw JSON), endpoint_check says where it checks, plan_deployment's row is replaced
by what the plan chose."""

from __future__ import annotations

import io

from rich.console import Console

from agent.faces.chat_view import ChatView
from agent.loop.events import ToolCallEvent, ToolResultEvent
from tests.support.no_hosts import no_hosts
from tools.deploy.rollout.state import SessionState
from tools.endpoint_check import EndpointCheckInput, EndpointCheckTool
from tools.job_wait import JobWait, JobWaitInput
from tools.world_note import WorldNoteInput, WorldNoteTool


def test_a_tool_without_its_own_summary_shows_its_input_as_words() -> None:
    wait = JobWait(no_hosts()).summary(
        JobWaitInput(hosts=["spark-a", "spark-b"], names=["pull-image"], first=True)
    )
    assert wait.startswith("hosts spark-a, spark-b · names pull-image · first True")
    assert "{" not in wait and '"' not in wait
    note = WorldNoteTool().summary(WorldNoteInput(belief="x" * 300, evidence="ibdev2netdev"))
    assert len(note) <= 200 and note.startswith("belief xxx")


def test_endpoint_check_says_where_and_what_it_checks() -> None:
    params = EndpointCheckInput(host="spark-a", port=8000, model="Qwen/Qwen3.5-122B-A10B-FP8")
    assert EndpointCheckTool(SessionState(), no_hosts()).summary(params) == (
        "spark-a:8000 Qwen/Qwen3.5-122B-A10B-FP8, benchmark at 1, 4, 16 streams"
    )


def test_a_finished_row_says_what_the_call_did_where_it_differs_from_the_ask() -> None:
    out = io.StringIO()
    view = ChatView(Console(file=out, width=120, color_system=None))
    asked = "vllm-ray Qwen/Qwen3.5-122B-A10B-FP8 on spark-a, spark-b"
    view.on_event(ToolCallEvent(id="t1", name="plan_deployment", input={}, summary=asked,
                                hosts=["spark-a", "spark-b"]))  # fmt: skip
    planned = "vllm-multinode Qwen/Qwen3.5-122B-A10B-FP8 on spark-a, spark-b"
    view.on_event(
        ToolResultEvent(id="t1", name="plan_deployment", text="Plan: …", meta={"summary": planned})
    )
    row = next(line for line in out.getvalue().splitlines() if "plan_deployment" in line)
    assert planned in row and "vllm-ray" not in row
