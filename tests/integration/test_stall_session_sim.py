"""The stall scenario as a whole session (issue 38's acceptance): recon, a plan, its approval, the
rollout and the proof with a soak, on two Sparks whose engines load NCCL builds that differ
(sim/scenarios/nccl-build-skew.yaml: TP=2 wedges under concurrent load, as in vLLM issue #41725).

The session's own record must carry, before the model's last word: the soak's stall with its
time, the engine's log lines of the hang, and the fingerprint's two NCCL builds, in the text the
operator and the model read, not only in the JSON beside it.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest

from agent.loop.scripted_client import ScriptedClient
from agent.loop.transcript import read_transcript
from agent.replay.redrive import sim_runtime
from agent.safety.approvers.scripted import ScriptedApprover
from tests.support.session_kit import text_turn, tool_turn

pytestmark = [pytest.mark.slow, pytest.mark.timeout(300)]

SCENARIO = "nccl-build-skew"
MODEL = "Qwen/Qwen3.5-122B-A10B-FP8"
PLAN = {"model": MODEL, "hosts": ["spark-a", "spark-b"], "model_size_gb": 119}
PATIENT = {"check_attempts": 30, "check_interval_s": 0.3}
# a short sweep, then four streams (the wedge needs two or more in flight) until one stalls
PROOF = {"host": "spark-a", "port": 8000, "model": MODEL, "concurrency": [1, 2], "runs": 1,
         "output_len": 16, "soak_s": 60, "soak_concurrency": 4, "stall_s": 2}  # fmt: skip
DONE = "Done: served and proven."


async def run(turns: list[dict[str, Any]], tmp_path: Path, approvals: int = 0) -> Path:
    """The scripted session on a fresh cluster of the scenario; its transcript."""
    client = ScriptedClient([*turns, text_turn(DONE)])
    approver = ScriptedApprover([("approved", "")] * approvals, name="operator")
    transcript = tmp_path / "session.jsonl"
    async with sim_runtime(
        SCENARIO, client=client, approver_factory=lambda rules: approver,
        transcript_path=transcript,
    ) as runtime:  # fmt: skip
        await runtime.session.send("deploy the model on both Sparks and prove it under load")
    return transcript


def planning() -> list[dict[str, Any]]:
    return [
        tool_turn([("recon", "recon", {"hosts": "all"})]),
        tool_turn([("plan", "plan_deployment", PLAN)]),
    ]


async def test_the_session_reports_the_stall_its_time_its_log_lines_and_both_nccl_builds(
    tmp_path: Path,
) -> None:
    planned = [e for e in read_transcript(await run(planning(), tmp_path / "p")).events
               if e.type == "tool_result" and e.name == "plan_deployment"]  # fmt: skip
    plan = planned[0].data
    rollout = [
        tool_turn([(f"s{n}", "rollout_step", {"step": n, **PATIENT})])
        for n in range(1, len(plan["plan"]["steps"]) + 1)
    ]
    turns = [
        *planning(),
        tool_turn([("propose", "propose_plan", {"plan_hash": plan["plan_hash"]})]),
        *rollout,
        tool_turn([("check", "endpoint_check", PROOF)]),
    ]
    events = read_transcript(await run(turns, tmp_path / "s", approvals=20)).events

    results = {e.id: e for e in events if e.type == "tool_result"}
    for n in range(1, len(rollout) + 1):
        assert not results[f"s{n}"].is_error, results[f"s{n}"].text
    proof = results["check"]
    assert not proof.is_error, proof.text
    lines = proof.text.splitlines()
    stall = next(line for line in lines if line.startswith("soak:"))
    assert re.search(r"soak: STALL under c=4 at \d+(\.\d+)? ?(s|min)\b", stall), stall
    assert "got no token for" in stall
    logged = [line for line in lines if line.startswith("  spark-a engine log:")]
    assert any("Watchdog caught collective operation timeout" in line for line in logged), lines
    builds = next(line for line in lines if line.startswith("NODES DIFFER:"))
    said = re.sub(r"\s+", " ", " ".join(lines[lines.index(builds) :]))
    assert "2.28.9+cuda13.0 build-id a7f420a1d5c3e9b8" in said, said
    assert "2.28.9+cuda13.0 build-id c0db9360e4b1a7d2" in said, said
    nodes = proof.data["report"]["fingerprint"]["nodes"]
    assert nodes["spark-a"]["nccl_build"] != nodes["spark-b"]["nccl_build"]
    # all of it before the session says done
    order = [e for e in events if e.type in ("tool_result", "model_response")]
    at = order.index(proof)
    last_words = [e for e in order[at + 1 :] if e.type == "model_response"]
    assert [c.get("text") for e in last_words for c in e.content] == [DONE]
    assert order[-1] is last_words[-1]  # and nothing after it
