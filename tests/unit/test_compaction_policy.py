"""Which results compaction replaces, and what the stub in their place says."""

from __future__ import annotations

from typing import Any

from agent.loop.compaction import CallLedger, CompactionPolicy, plan_compaction
from agent.loop.events import ToolCallEvent, ToolResultEvent
from agent.loop.history import tool_result_block
from tools.propose_plan import ProposePlanTool

BIG = "line of output\n" * 200  # 3,000 characters
POLICY = CompactionPolicy(enabled=True, keep_turns=2, min_chars=1_000, chunk_chars=0)


class Story:
    """A conversation built turn by turn, with the ledger the session would have kept."""

    def __init__(self) -> None:
        self.messages: list[dict[str, Any]] = [
            {"role": "user", "content": [{"type": "text", "text": "Deploy the model."}]}
        ]
        # as the runtime builds it: the tools that declare `approves_plan` stay whole
        self.ledger = CallLedger(kept_whole=frozenset({ProposePlanTool.name}))
        self.seq = 10

    def turn(
        self,
        call_id: str,
        text: str = BIG,
        *,
        tool: str = "ssh_exec",
        hosts: tuple[str, ...] = ("spark-a",),
        is_error: bool = False,
        meta: dict[str, Any] | None = None,
        data: dict[str, Any] | None = None,
    ) -> None:
        use = {"type": "tool_use", "id": call_id, "name": tool, "input": {"command": "x"}}
        self.messages.append({"role": "assistant", "content": [use]})
        self.seq += 2
        summary = f"cat /var/log/{call_id}.log"
        self.ledger.called(
            ToolCallEvent(
                seq=self.seq - 1,
                id=call_id,
                name=tool,
                input={},
                hosts=list(hosts),
                summary=summary,
            )
        )
        self.ledger.finished(
            ToolResultEvent(
                seq=self.seq,
                id=call_id,
                name=tool,
                text=text,
                is_error=is_error,
                meta=meta if meta is not None else {"exit_status": 1 if is_error else 0},
                data=data or {},
            )
        )
        block = tool_result_block(call_id, text, is_error)
        self.messages.append({"role": "user", "content": [block]})


def test_old_large_results_become_stubs_that_say_what_how_and_where():
    story = Story()
    for number in range(1, 6):
        story.turn(f"toolu_{number}")
    stubs = plan_compaction(story.messages, story.ledger, POLICY).stubs
    assert sorted(stubs) == ["toolu_1", "toolu_2", "toolu_3"]  # the newest two turns stay whole
    # what the call asked stays in its tool_use right above the stub
    assert stubs["toolu_1"] == (
        "[compacted: ssh_exec → exit 0; 3000 chars in transcript event 12; recall_result reads it]"
    )


def test_nothing_is_compacted_until_a_whole_chunk_can_go():
    story = Story()
    for number in range(1, 6):
        story.turn(f"toolu_{number}")
    waiting = CompactionPolicy(enabled=True, keep_turns=2, min_chars=1_000, chunk_chars=20_000)
    assert not plan_compaction(story.messages, story.ledger, waiting)
    assert len(plan_compaction(story.messages, story.ledger, waiting, force=True).stubs) == 3


def test_small_results_the_plan_and_gate_refusals_stay_whole():
    story = Story()
    story.turn("toolu_small", "exit 0, 12 bytes")
    story.turn("toolu_plan", BIG, tool="propose_plan", hosts=())
    story.turn("toolu_denied", BIG, is_error=True, meta={"gated": True, "risk": "destructive"})
    story.turn("toolu_log", BIG)
    story.turn("toolu_new1")
    story.turn("toolu_new2")
    assert sorted(plan_compaction(story.messages, story.ledger, POLICY).stubs) == ["toolu_log"]


def test_an_error_stays_whole_until_the_model_has_answered_it():
    story = Story()
    failed = BIG + "Error: port 8000 is already in use\n"
    story.turn("toolu_fail", failed, is_error=True)
    story.turn("toolu_other_host", hosts=("spark-b",))
    story.turn("toolu_a", tool="web_fetch", hosts=())
    story.turn("toolu_b", tool="docker_ctl")
    assert "toolu_fail" not in plan_compaction(story.messages, story.ledger, POLICY).stubs
    story.turn("toolu_retry")  # the same tool on the same host again: the error is answered
    story.turn("toolu_c", tool="docker_ctl")
    stubs = plan_compaction(story.messages, story.ledger, POLICY).stubs
    assert "toolu_fail" in stubs and "→ exit 1;" in stubs["toolu_fail"]


def test_a_fan_out_stub_names_each_hosts_exit_status_and_the_spill_file():
    story = Story()
    per_host = {
        "spark-a": {"exit_status": 0},
        "spark-b": {"exit_status": 0},
        "spark-c": {"exit_status": 2},
    }
    text = BIG + "[... 9000 characters omitted; full output saved to /tmp/spill/x.txt ...]"
    story.turn("toolu_fan", text, hosts=("spark-a", "spark-b", "spark-c"), data={"hosts": per_host})
    story.turn("toolu_1")
    story.turn("toolu_2")
    stub = plan_compaction(story.messages, story.ledger, POLICY).stubs["toolu_fan"]
    assert "→ exit 0 on spark-a, spark-b; exit 2 on spark-c;" in stub
    assert "transcript event 12 and /tmp/spill/x.txt;" in stub


def test_compaction_off_compacts_nothing():
    story = Story()
    for number in range(1, 6):
        story.turn(f"toolu_{number}")
    off = CompactionPolicy(enabled=False, keep_turns=2, min_chars=0, chunk_chars=0)
    assert not plan_compaction(story.messages, story.ledger, off, force=True)


def test_old_whole_turns_fold_in_a_chunk_but_never_the_plan_or_an_open_error():
    story = Story()
    story.turn("toolu_plan", BIG, tool="propose_plan", hosts=())
    story.turn("toolu_open", BIG, tool="docker_ctl", is_error=True)
    for number in range(1, 9):
        story.turn(f"toolu_{number}")
    folding = CompactionPolicy(
        enabled=True, keep_turns=2, min_chars=1_000, chunk_chars=10**9, fold_after_turns=3
    )
    plan = plan_compaction(story.messages, story.ledger, folding)
    assert plan.folded == [f"toolu_{n}" for n in range(1, 6)]  # turns older than the newest 3
    # a chunk of folds is due though no chunk of stubs is; rewriting anyway, every stub goes too
    assert sorted(plan.stubs) == [f"toolu_{n}" for n in range(1, 7)]


def test_folding_waits_until_a_whole_chunk_of_turns_can_go():
    story = Story()
    for number in range(1, 6):
        story.turn(f"toolu_{number}")
    folding = CompactionPolicy(
        enabled=True, keep_turns=2, min_chars=1_000, chunk_chars=10**9, fold_after_turns=3
    )
    assert not plan_compaction(story.messages, story.ledger, folding)  # 2 foldable, 3 needed
    story.turn("toolu_6")
    assert plan_compaction(story.messages, story.ledger, folding).folded == [
        "toolu_1",
        "toolu_2",
        "toolu_3",
    ]
