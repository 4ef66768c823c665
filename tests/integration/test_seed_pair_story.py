"""The seed story end to end: the recorded deployment session, re-driven (the demo tells the
fresh-pair story, tests/integration/test_fresh_pair_story.py)."""

import pytest

from agent.loop.transcript import read_transcript
from tests.support.proof_report import assert_ends_with_the_report, assert_engine_benchmark
from tests.support.scout_cli import ROOT, scout

pytestmark = pytest.mark.slow

TRANSCRIPT = ROOT / "transcripts" / "seed-pair-deploy.jsonl"


def test_the_recording_tells_the_whole_story_in_order():
    events = read_transcript(TRANSCRIPT).events
    calls = [e for e in events if e.type == "tool_call"]
    steps = [c.summary or "" for c in calls if c.name == "rollout_step"]
    first_batch = {c.name for c in calls[:3]}
    assert first_batch == {"todo_write", "recon", "web_fetch"}  # recon and the guide, one round
    findings = [f["message"] for e in events if e.type == "world_update" for f in e.findings]
    assert any("cannot start while vllm_node" in m for m in findings)
    assert any("RoCE link down on spark-b" in m for m in findings)
    order = [
        next(i for i, c in enumerate(steps) if needle in c)
        for needle in (
            "docker stop vllm_node",
            "ip link set enp1s0f1np1 up",
            "mpirun -np 2 -H 192.168.100.10:1,$(ssh 192.168.200.13 ip -4",  # the fabric test
            "vllm serve Qwen/Qwen3.5-122B-A10B-FP8 --tensor-parallel-size 2",  # rank 1, a job
            "--node-rank 0",
        )
    ]
    assert "docker exec -d" not in " ".join(steps)  # the engine runs as a job with its own log
    assert order == sorted(order)
    decisions = [e for e in events if e.type == "approval_decision"]
    assert decisions and all(d.decision == "approved" for d in decisions)
    assert [c.name for c in calls[-2:]] == ["endpoint_check", "todo_write"]
    check = next(e for e in events if e.type == "tool_result" and e.name == "endpoint_check")
    assert not check.is_error, check.text
    assert_engine_benchmark(check.data["report"])


def test_replay_with_the_simulator_has_no_drift_and_ends_with_tokens_per_second(tmp_path):
    done = scout("replay", str(TRANSCRIPT), "--sim", "seed-pair", home=tmp_path)
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    assert "no drift: 15 model turns replayed as recorded" in done.stdout
    assert_ends_with_the_report(done.stdout)


def test_a_cut_recording_under_the_simulator_says_it_ended_early(tmp_path):
    lines = TRANSCRIPT.read_text().splitlines()
    requests = [i for i, line in enumerate(lines) if '"type":"model_request"' in line]
    cut = tmp_path / "cut.jsonl"
    cut.write_text("\n".join(lines[: requests[1]]) + "\n")  # the first turn and its results
    done = scout("replay", str(cut), "--sim", "seed-pair", home=tmp_path)
    assert done.returncode == 1, done.stdout[-2000:] + done.stderr[-2000:]
    assert "The recording ends after 1 model turn, but this run asked for another" in done.stdout
    assert "the recording ended early" in done.stdout
    assert "no drift" not in done.stdout and "Traceback" not in done.stderr
