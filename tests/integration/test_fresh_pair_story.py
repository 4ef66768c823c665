"""The from-zero story: the recorded fresh-pair deployment in order, replayed without drift, and
told by `scout demo`."""

import re
from pathlib import Path

from agent.loop.transcript import read_transcript
from tests.support.scout_cli import ROOT, scout

TRANSCRIPT = ROOT / "agent" / "transcripts" / "fresh-pair-deploy.jsonl"
NGC = "nvcr.io/nvidia/vllm:26.05-py3"


def test_the_recording_provisions_from_zero_then_serves_and_measures():
    events = read_transcript(TRANSCRIPT).events
    calls = [e for e in events if e.type == "tool_call"]
    assert {c.name for c in calls[:3]} == {"todo_write", "recon", "web_fetch"}
    steps = [c.summary or "" for c in calls if c.name == "rollout_step"]
    order = [
        next(i for i, c in enumerate(steps) if needle in c)
        for needle in (
            "docker stop vllm_node",
            f"docker pull {NGC}",
            f"docker save {NGC} | ssh ",  # the worker has no internet: the head copies it
            "hf download Qwen/Qwen3.5-122B-A10B-FP8",
            "rsync ",  # the weights over the fabric
            "--distributed-executor-backend mp",  # the NGC image has no Ray: multiprocess vLLM
            "--node-rank 0",
        )
    ]
    assert order == sorted(order)
    results = {e.id: e for e in events if e.type == "tool_result"}
    stepped = [results[c.id] for c in calls if c.name == "rollout_step"]
    assert stepped and not [r for r in stepped if r.is_error]
    assert any(f"Loaded image: {NGC}" in r.text for r in stepped)
    assert "The rollout is complete" in stepped[-1].text
    decisions = [e for e in events if e.type == "approval_decision"]
    assert decisions and all(d.decision == "approved" for d in decisions)
    check = next(e for e in events if e.type == "tool_result" and e.name == "endpoint_check")
    assert not check.is_error and check.data["single"]["tok_s"] > 0


def test_replay_with_the_simulator_has_no_drift_and_ends_with_tokens_per_second(tmp_path):
    done = scout("replay", str(TRANSCRIPT), "--sim", "fresh-pair", home=tmp_path)
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    lines = done.stdout.strip().splitlines()
    assert "no drift: " in done.stdout and "model turns replayed as recorded" in done.stdout
    assert "tok/s" in lines[-1] and "single stream" in lines[-1]


def test_scout_demo_runs_the_story_and_says_where_the_transcript_is(tmp_path):
    done = scout("demo", "--fast", home=tmp_path, columns=100)
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    tail = done.stdout[done.stdout.index("summary") :]
    assert "single stream" in tail and "tok/s" in tail
    lines = done.stdout.splitlines()
    assert [line for line in lines if line != line.rstrip()] == []  # piped: no padding
    assert all(len(line) <= 100 for line in lines if not line.startswith("transcript saved"))
    for line in lines:  # a number stays with its unit, never broken across lines
        if "tok/s" in line:
            assert re.search(r"\d+\.\d+ tok/s", line), line
    assert not re.search(r"\d\.\n\d", done.stdout)
    saved = tail.split("transcript saved: ")[1].split()[0]
    assert Path(saved).is_file() and Path(saved).is_relative_to(tmp_path)
    assert "approval needed" in done.stdout  # approvals are shown as they are answered
    assert "$ docker save nvcr.io/nvidia/vllm:26.05-py3 | ssh" in " ".join(done.stdout.split())
