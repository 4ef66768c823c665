"""The deployment record, read off real transcripts (the bundled stories), and the plans it makes.

A record exists only for a rollout that finished and was proven; it names what Scout started,
what it changed with each change's undo (the plan step's own rollback, on the host it names), and
the proof's fingerprint. Teardown's plan stops the serving host's engine first and, asked to
restore, undoes the changes newest first.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from agent.daytwo.teardown import takedown_plan
from agent.runtime.deployment_record import (
    RecordStore,
    build_record,
    read_transcript_events,
    record_id,
)

STORIES = Path(__file__).resolve().parents[2] / "transcripts"


def story_record(name: str):
    path = STORIES / f"{name}.jsonl"
    record = build_record(read_transcript_events(path), path)
    assert record is not None
    return record


def test_the_fresh_pair_story_records_its_engines_its_changes_and_their_undo():
    record = story_record("fresh-pair-deploy")
    assert (record.id, record.endpoint) == ("qwen3.5-122b-a10b-fp8@spark-a-8000", "spark-a:8000")
    assert {(s.host, s.container) for s in record.started} == {
        ("spark-a", "scout-vllm"),
        ("spark-b", "scout-vllm"),
    }
    assert [(c.host, c.undo, c.undo_host) for c in record.changes] == [
        ("spark-a", "docker start vllm_node", "spark-a"),
        (
            "spark-b",
            "sudo ip link set enp1s0f1np1 down && sudo ip link set enP2p1s0f1np1 down",
            "spark-b",
        ),
    ]
    assert record.fingerprint["serve_command_hash"].startswith("sha256:")
    assert record.proof.startswith("health ok")


def test_no_record_without_a_finished_and_proven_rollout():
    path = STORIES / "fresh-pair-deploy.jsonl"
    events = read_transcript_events(path)
    unproven = [e for e in events if e.get("name") != "endpoint_check"]
    assert build_record(unproven, path) is None
    unfinished = [e for e in events if (e.get("change") or {}).get("state") != "done"]
    assert build_record(unfinished, path) is None
    assert build_record(read_transcript_events(STORIES / "sample-batch.jsonl"), path) is None


def test_a_failed_proof_records_nothing():
    path = STORIES / "fresh-pair-deploy.jsonl"
    events = [
        {**e, "is_error": True} if e.get("name") == "endpoint_check" else e
        for e in read_transcript_events(path)
    ]
    assert build_record(events, path) is None


def test_teardown_stops_the_serving_host_first_and_restores_newest_change_first():
    plan = takedown_plan(story_record("fresh-pair-deploy"), "teardown", restore=True)
    assert [(s.hosts, s.actions) for s in plan.steps] == [
        (["spark-a"], ["docker stop --time=30 scout-vllm", "docker rm scout-vllm"]),
        (["spark-b"], ["docker stop --time=30 scout-vllm", "docker rm scout-vllm"]),
        (["spark-b"], ["sudo ip link set enp1s0f1np1 down && sudo ip link set enP2p1s0f1np1 down"]),
        (["spark-a"], ["docker start vllm_node"]),
    ]


def test_without_restore_the_changes_stay_and_the_plan_says_so():
    plan = takedown_plan(story_record("fresh-pair-deploy"), "teardown")
    assert len(plan.steps) == 2
    assert any(
        "--restore undoes them" in risk and "docker stop vllm_node" in risk for risk in plan.risks
    )


def test_stop_keeps_the_containers():
    plan = takedown_plan(story_record("spark-trio-deploy"), "stop")
    assert {a for s in plan.steps for a in s.actions} == {"docker stop --time=30 scout-vllm"}
    assert all(s.rollback == "docker start scout-vllm" for s in plan.steps)


def test_a_rollback_in_prose_is_no_command(tmp_path: Path):
    path = STORIES / "fresh-pair-deploy.jsonl"
    events = read_transcript_events(path)
    for event in events:
        for step in (event.get("change") or {}).get("steps") or []:
            if step["kind"] == "link-up":
                step["rollback"] = "none (the link was down for a reason only a person knows)"
    record = build_record(events, path)
    assert record is not None
    plan = takedown_plan(record, "teardown", restore=True)
    assert [s.actions for s in plan.steps][-1] == ["docker start vllm_node"]
    assert any(risk.startswith("cannot undo on spark-b") for risk in plan.risks)


def test_the_store_keeps_one_record_per_endpoint_and_names_what_it_cannot_read(tmp_path: Path):
    store = RecordStore(tmp_path / "deployments")
    record = story_record("fresh-pair-deploy")
    store.save(record)
    store.save(record.model_copy(update={"proof": "again"}))
    (tmp_path / "deployments" / "broken.json").write_text("{not json")
    records, problems = store.load()
    assert [r.proof for r in records] == ["again"]
    assert len(problems) == 1 and "broken.json: not a deployment record" in problems[0]
    assert store.find("spark-a:8000") == records[0]
    assert isinstance(store.find("elsewhere:1"), str)
    assert (
        json.loads((tmp_path / "deployments" / f"{record.id}.json").read_text())["id"] == record.id
    )


@pytest.mark.parametrize(
    ("model", "expected"),
    [
        ("Qwen/Qwen3.5-122B-A10B-FP8", "qwen3.5-122b-a10b-fp8@spark-a-8000"),
        ("openai/gpt-oss-120b", "gpt-oss-120b@spark-a-8000"),
    ],
)
def test_record_ids_name_the_model_and_the_endpoint(model: str, expected: str):
    assert record_id(model, "spark-a", 8000) == expected


def test_the_record_keeps_the_rollouts_steps_for_an_upgrade_to_redo():
    record = story_record("fresh-pair-deploy")
    kinds = [step["kind"] for step in record.steps]
    assert kinds[:3] == ["stop", "link-up", "pull"] and kinds[-1] == "serve"
    assert record.steps[-1]["actions"][0].startswith("docker exec scout-vllm vllm serve ")


def test_a_plan_that_takes_down_another_recorded_deployments_container_says_so():
    record = story_record("fresh-pair-deploy")
    apart = record.model_copy(update={"id": "apart@spark-c-8000", "started": []})
    sharing = record.model_copy(update={"id": "other@spark-a-8001", "model": "other/model"})
    assert record.evictions([record, apart]) == []  # itself, and one that shares nothing
    [line] = record.evictions([sharing])
    assert line == (
        "evicts the recorded deployment other@spark-a-8001 (other/model at spark-a:8000): it "
        "shares spark-a (scout-vllm), spark-b (scout-vllm) with this one"
    )
    plan = takedown_plan(record, "teardown", others=[record, sharing])
    assert line in plan.risks


def test_the_store_lends_its_records_as_plans_are_checked_against_them(tmp_path: Path) -> None:
    store = RecordStore(tmp_path)
    store.save(story_record("fresh-pair-deploy"))
    [recorded] = store.recorded()
    assert (recorded.host, recorded.port) == ("spark-a", 8000)
    assert set(recorded.containers) == {("spark-a", "scout-vllm"), ("spark-b", "scout-vllm")}
