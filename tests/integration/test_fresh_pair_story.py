"""The from-zero story: the recorded fresh-pair deployment in order, replayed without drift, and
told by `scout demo`."""

import json
import re
from pathlib import Path

import pytest

from agent.loop.transcript import read_transcript
from tests.support.proof_report import (
    assert_ends_with_the_report,
    assert_engine_benchmark,
    chart_of,
)
from tests.support.scout_cli import ROOT, scout

pytestmark = pytest.mark.slow

TRANSCRIPT = ROOT / "transcripts" / "fresh-pair-deploy.jsonl"
NGC = "nvcr.io/nvidia/vllm:26.05-py3"
CACHE = "~/.cache/huggingface/hub/models--Qwen--Qwen3.5-122B-A10B-FP8"


def test_the_recording_provisions_from_zero_then_serves_and_measures():
    events = read_transcript(TRANSCRIPT).events
    calls = [e for e in events if e.type == "tool_call"]
    assert {c.name for c in calls[:3]} == {"todo_write", "recon", "web_fetch"}
    steps = [c.summary or "" for c in calls if c.name == "rollout_step"]
    lookup = "$(ssh 192.168.200.13 ip -4 -br addr show dev enp1s0f1np1 | grep"
    order = [
        next(i for i, c in enumerate(steps) if needle in c)
        for needle in (
            "docker stop vllm_node",
            f"docker pull {NGC}",
            "hf download Qwen/Qwen3.5-122B-A10B-FP8",
            f"docker save {NGC} | ssh 192.168.200.13 docker load",  # no internet on the worker
            f"rsync -a --mkpath --info=progress2 {CACHE}/ {lookup}",  # to its fabric address
            f"mpirun -np 2 -H 192.168.100.10:1,{lookup}",  # the fabric test, after the copies
            "--distributed-executor-backend mp",  # the NGC image has no Ray: multiprocess vLLM
            "--node-rank 0",
        )
    ]
    assert order == sorted(order)
    assert "copy the weights to spark-b over the fabric (enp1s0f1np1)" in steps[order[4]]
    results = {e.id: e for e in events if e.type == "tool_result"}
    stepped = [results[c.id] for c in calls if c.name == "rollout_step"]
    assert stepped and not [r for r in stepped if r.is_error]
    assert any(f"Loaded image: {NGC}" in r.text for r in stepped)
    test = next(r for r in stepped if "done: measure the fabric" in r.text)
    assert "measured bus bandwidth 21.4 GB/s (171 Gb/s)" in test.text
    assert "fabric measured from spark-a" in [e.summary for e in events if e.type == "world_update"]
    assert "The rollout is complete" in stepped[-1].text
    decisions = [e for e in events if e.type == "approval_decision"]
    assert decisions and all(d.decision == "approved" for d in decisions)
    check = next(e for e in events if e.type == "tool_result" and e.name == "endpoint_check")
    assert not check.is_error, check.text
    assert_engine_benchmark(check.data["report"])


def test_the_pull_and_the_download_start_in_one_batch_as_jobs_with_progress():
    events = read_transcript(TRANSCRIPT).events
    responses = [e for e in events if e.type == "model_response"]
    batch = next(
        r for r in responses if [b.get("name") for b in r.content].count("rollout_step") == 2
    )
    steps = [b["input"]["step"] for b in batch.content if b.get("name") == "rollout_step"]
    assert steps == [3, 4]
    calls = {e.id: e for e in events if e.type == "tool_call"}
    ids = [b["id"] for b in batch.content if b.get("name") == "rollout_step"]
    assert f"docker pull {NGC}" in (calls[ids[0]].summary or "")
    assert "hf download Qwen/Qwen3.5-122B-A10B-FP8" in (calls[ids[1]].summary or "")
    pair = {"pull-image", "download-weights"}
    jobs = [e for e in events if e.type == "job" and e.name in pair]
    first_end = next(i for i, e in enumerate(jobs) if e.kind == "end")
    assert {e.name for e in jobs[:first_end] if e.kind == "start"} == pair  # both ran at once
    for name in pair:  # each with its progress, then its end
        assert [e for e in jobs if e.name == name and e.kind == "progress" and e.progress]
        assert next(e for e in jobs if e.name == name and e.kind == "end").exit_code == 0


def test_replay_with_the_simulator_has_no_drift_and_ends_with_tokens_per_second(tmp_path):
    done = scout("replay", str(TRANSCRIPT), "--sim", "fresh-pair", home=tmp_path)
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    assert "no drift: " in done.stdout and "model turns replayed as recorded" in done.stdout
    assert_ends_with_the_report(done.stdout)


def test_scout_demo_runs_the_story_and_says_where_the_transcript_is(tmp_path):
    done = scout("demo", "--fast", home=tmp_path, columns=100)
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    tail = done.stdout[done.stdout.index("summary") :]
    assert "single stream" in tail and "tok/s" in tail
    assert_ends_with_the_report(tail.rsplit("\ntranscript saved", 1)[0])
    chart = chart_of(tail.rsplit("\ntranscript saved", 1)[0])
    rows = json.loads(chart.with_suffix(".json").read_text())["rows"]
    assert chart.read_text().count("<circle") == len(rows) >= 1  # a point per measured level
    lines = done.stdout.splitlines()
    assert [line for line in lines if line != line.rstrip()] == []  # piped: no padding
    paths = ("transcript saved", "chart: ", "data: ")  # a path is never broken
    assert all(len(line) <= 100 for line in lines if not line.startswith(paths))
    for line in lines:  # a number stays with its unit, never broken across lines
        if "tok/s" in line:
            assert re.search(r"\d+\.\d+ tok/s", line), line
    assert not re.search(r"\d\.\n\d", done.stdout)
    saved = tail.split("transcript saved: ")[1].split()[0]
    assert Path(saved).is_file() and Path(saved).is_relative_to(tmp_path)
    # asked once, for the plan with its steps: every rollout step and the plan's own proof (the
    # endpoint check with the sweep the plan names) run on that approval
    assert done.stdout.count("approval needed") == 1
    flat = " ".join(done.stdout.split())
    assert "approved by plan approval: the proof as approved with the plan" in flat
    assert "approved by plan approval: step 5 as approved with the plan" in flat
    assert "✓ job spark-a/copy-image-spark-b exited 0" in flat
    assert "Loaded image: nvcr.io/nvidia/vllm:26.05-py3" in flat
    assert "Steps 3 and 4 need nothing but the internet" in flat
    assert "✓ job spark-a/fabric-test exited 0" in flat and "(171 Gb/s)" in flat
