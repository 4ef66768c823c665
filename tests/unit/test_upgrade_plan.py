"""The upgrade plan made from the recorded fresh-pair story: fetch while it serves, swap, prove;
the rollback named; in place where the two engines' memory does not fit together."""

from __future__ import annotations

from pathlib import Path

import pytest

from agent.daytwo.upgrade_plan import UpgradeRefused, UpgradeRequest, upgrade_plan
from agent.runtime.deployment_record import DeploymentRecord, build_record, read_transcript_events
from tools.deploy.steps import DeployStep

STORY = Path(__file__).parents[2] / "transcripts" / "fresh-pair-deploy.jsonl"
OLD, NEW = "nvcr.io/nvidia/vllm:26.05-py3", "nvcr.io/nvidia/vllm:26.06-py3"


@pytest.fixture(scope="module")
def record() -> DeploymentRecord:
    built = build_record(read_transcript_events(STORY), STORY)
    assert built is not None
    return built


def test_an_image_upgrade_fetches_first_then_swaps_and_names_its_rollback(record):
    up = upgrade_plan(record, UpgradeRequest(image=NEW), tag="abc123")
    assert [s.id for s in up.fetch] == ["pull:spark-a", "image-copy:spark-b"]
    assert up.fetch[0].actions == [f"docker pull {NEW}"]
    assert up.fetch[0].job == "pull-image-upabc123"
    assert up.fetch[1].check.expect == r"^nvcr\.io/nvidia/vllm:26\.06\-py3$"
    assert [s.id for s in up.forward[2:4]] == ["retire:spark-a", "retire:spark-b"]
    engine = up.forward[4:]
    assert engine == up.engine
    assert [s.kind for s in engine] == ["container", "rank", "container", "serve"]
    started = [a for s in engine if s.kind == "container" for a in s.actions]
    assert len(started) == 2 and all(NEW in a and OLD not in a for a in started)
    rank = next(s for s in engine if s.kind == "rank")
    assert rank.job == "scout-rank-1-upabc123"
    assert '/scout-rank-1-upabc123"/log' in rank.check.command
    # the rollback: clear both hosts, the recorded engine as it was (its jobs renamed), its proof
    back = up.back
    assert [s.id for s in back[:2]] == ["rollback-remove:spark-a", "rollback-remove:spark-b"]
    recorded = [DeployStep.model_validate(s) for s in record.steps]
    old_engine = [s for s in recorded if s.kind in {"container", "rank", "serve"}]
    assert [s.actions for s in back[2:]] == [s.actions for s in old_engine]
    assert back[-1].job == "scout-serve-rbabc123"
    assert up.plan.on_failure[-1] == up.plan.proof
    assert up.plan.risks[0].startswith(
        "in place, not blue/green: the old engine holds 0.8 and the new one needs 0.8"
    )


def test_flags_are_added_and_dropped_on_every_engine_rank_without_a_fetch(record):
    up = upgrade_plan(
        record, UpgradeRequest(add_flags=["--enforce-eager"], drop_flags=["--kv-cache-dtype"])
    )
    assert up.fetch == []
    assert up.plan.goal.endswith(": adding --enforce-eager, dropping --kv-cache-dtype")
    commands = [s.actions[0] for s in up.engine if s.kind in {"rank", "serve"}]
    assert len(commands) == 2
    for command in commands:
        assert command.endswith(" --enforce-eager") and "--kv-cache-dtype" not in command
        assert " fp8" not in command.replace("FP8", "")


def test_a_revision_downloads_it_first_and_serves_it(record):
    up = upgrade_plan(record, UpgradeRequest(revision="0a1b2c3"))
    assert [s.kind for s in up.fetch] == ["download", "copy"]
    assert up.fetch[0].actions[0].endswith(" --revision 0a1b2c3")
    serve = next(s for s in up.engine if s.kind == "serve")
    assert "--revision 0a1b2c3" in serve.actions[0]


def test_blue_green_where_both_engines_fit_the_new_one_beside_then_the_move(record):
    small = record.model_copy(update={"steps": [_share(s, "0.4") for s in record.steps]})
    up = upgrade_plan(small, UpgradeRequest(image=NEW), tag="abc123")
    assert up.layout.startswith("blue/green: the old engine holds 0.4 and the new one needs 0.4")
    kinds = [s.id if isinstance(s, DeployStep) else "proof" for s in up.forward]
    assert kinds[-3:] == ["proof", "retire:spark-a", "retire:spark-b"]  # proven, then the move
    assert up.plan.proof is None and up.plan.steps[-3].actions == [
        "endpoint_check spark-a:8001 model=Qwen/Qwen3.5-122B-A10B-FP8 concurrency=1,4,16 "
        "mode=quick runs=3 input_len=1024 output_len=128"
    ]
    serve = next(s for s in up.engine if s.kind == "serve")
    assert serve.actions[0].startswith("docker exec scout-vllm-next vllm serve")
    assert "--port 8001" in serve.actions[0] and "--master-port 29502" in serve.actions[0]
    assert "localhost:8001" in serve.check.command
    assert [s.creates for s in up.engine if s.creates] == ["scout-vllm-next"] * 2
    assert (up.port, [s.container for s in up.started]) == (8001, ["scout-vllm-next"] * 2)
    # the rollback clears the new engine; the old one is restored only if it is gone
    assert [s.actions for s in up.clear] == [["docker rm -f scout-vllm-next"]] * 2
    assert up.clear[0].check.expect == r"^scout\-vllm\-next$"
    assert up.restore[0].actions == ["docker rm -f scout-vllm"]


def _share(step: dict, share: str) -> dict:
    actions = [a.replace("--gpu-memory-utilization 0.8", f"--gpu-memory-utilization {share}")
               for a in step["actions"]]  # fmt: skip
    return {**step, "actions": actions}


def test_an_upgrade_that_would_evict_another_recorded_deployment_says_so(record):
    other = record.model_copy(update={"id": "other@spark-b-8001", "model": "other/model"})
    up = upgrade_plan(record, UpgradeRequest(image=NEW), others=[record, other])
    [eviction] = [r for r in up.plan.risks if r.startswith("evicts")]
    assert eviction.startswith("evicts the recorded deployment other@spark-b-8001 (other/model at")


def test_what_cannot_be_upgraded_is_refused_in_one_line(record):
    with pytest.raises(UpgradeRefused, match="nothing to upgrade"):
        upgrade_plan(record, UpgradeRequest())
    with pytest.raises(UpgradeRefused, match="holds no rollout steps"):
        upgrade_plan(record.model_copy(update={"steps": []}), UpgradeRequest(image=NEW))
