"""Jobs in the world model: typed facts from the job tools' records, the events the transcript
keeps (starts, throttled progress, ends, unknown), and the lines the model reads."""

from __future__ import annotations

import io
from pathlib import Path

from rich.console import Console

from agent.faces.render import EventRenderer
from agent.loop.events import JobEvent
from agent.loop.transcript import read_transcript
from agent.runtime.builder import open_recorder
from agent.safety.redact import Redactor
from agent.world.job_events import job_event_listener
from agent.world.model import WorldModel
from tests.support.sparks import one_port_spark
from tools.jobs.progress import Progress
from tools.jobs.records import JobRecord
from tools.jobs.world_facts import jobs_read, jobs_started, jobs_stopped

MODEL_REPO = "Qwen/Qwen3.5-122B-A10B-FP8"
COMMAND = f"hf download {MODEL_REPO}"


def running(summary: str, fraction: float, elapsed: int) -> JobRecord:
    progress = Progress("hf_download", summary, fraction)
    return JobRecord("spark-b", "weights", "running", elapsed_s=elapsed, command=COMMAND,
                     progress=progress, tail="Fetching 14 files: 21%")  # fmt: skip


def world_with_events(every_s: float = 3600.0) -> tuple[WorldModel, list[JobEvent]]:
    events: list[JobEvent] = []
    return WorldModel(on_job=job_event_listener(events.append, every_s=every_s)), events


def test_a_job_is_recorded_from_start_to_end_with_throttled_progress() -> None:
    world, events = world_with_events()
    jobs_started(world, [{"host": "spark-b", "name": "weights", "command": COMMAND, "pid": 7}])
    jobs_read(world, "spark-b", [running("3/14 files, 25.5G/119G (21%)", 0.21, 60)])
    jobs_read(world, "spark-b", [running("5/14 files, 42.5G/119G (36%)", 0.36, 90)])  # too soon
    done = Progress("hf_download", "14/14 files, 119G", 1.0, ready=True)
    finished = JobRecord("spark-b", "weights", "exited", exit_code=0, elapsed_s=300,
                         command=COMMAND, tail="Download complete: 14 files\n/snapshots/abc\n",
                         progress=done)  # fmt: skip
    jobs_read(world, "spark-b", [finished])
    jobs_read(world, "spark-b", [finished])  # an ended job ends once

    assert [(e.kind, e.state) for e in events] == [
        ("start", "running"),
        ("progress", "running"),
        ("end", "exited"),
    ]
    assert events[1].progress == "3/14 files, 25.5G/119G (21%)" and events[1].fraction == 0.21
    assert events[2].exit_code == 0 and events[2].tail.endswith("/snapshots/abc")
    fact = world.jobs["spark-b/weights"]
    assert (fact.state, fact.exit_code, fact.elapsed_s) == ("exited", 0, 300)


def test_progress_samples_follow_the_progress_when_not_throttled() -> None:
    world, events = world_with_events(every_s=0.0)
    jobs_read(world, "spark-b", [running("3/14 files", 0.21, 60)])
    jobs_read(world, "spark-b", [running("3/14 files", 0.21, 62)])  # no news: no sample
    jobs_read(world, "spark-b", [running("4/14 files", 0.3, 64)])

    assert [(e.kind, e.progress) for e in events] == [
        ("found", "3/14 files"),
        ("progress", "4/14 files"),
    ]


def test_an_unreachable_host_makes_its_jobs_unknown_never_failed() -> None:
    world, events = world_with_events()
    jobs_read(world, "spark-b", [running("3/14 files", 0.21, 60)])
    jobs_read(world, "spark-b", "connection refused by spark-a (jump host)")
    jobs_read(world, "spark-b", "still refused")

    assert [e.kind for e in events] == ["found", "unknown"]
    assert events[1].state == "unknown" and events[1].why.startswith("connection refused")
    assert world.jobs["spark-b/weights"].progress == "3/14 files"  # the last known progress


def test_stopping_and_missing_jobs() -> None:
    world, events = world_with_events()
    jobs_read(world, "spark-b", [JobRecord("spark-b", "ghost", "missing")])  # never known
    jobs_read(world, "spark-b", [running("3/14 files", 0.21, 60)])
    jobs_stopped(world, "spark-b", ["weights", "ghost"])

    assert "spark-b/ghost" not in world.jobs
    assert [(e.kind, e.state) for e in events] == [("found", "running"), ("end", "stopped")]


def test_the_model_reads_each_job_in_one_line_of_the_world_model() -> None:
    world, _ = world_with_events()
    world.update("spark-a", one_port_spark("spark-a"))
    jobs_started(world, [{"host": "spark-a", "name": "image", "command": "docker pull x"}])
    jobs_read(world, "spark-b", [running("3/14 files, 25.5G/119G (21%), ETA 04:10", 0.21, 133)])

    text = world.describe(["spark-a", "spark-b"])

    assert "jobs:" in text
    assert "  spark-a/image [docker pull x]: running 0s" in text
    assert (
        f"  spark-b/weights [{COMMAND}]: running 2m13s · 3/14 files, 25.5G/119G (21%), ETA 04:10"
        in text
    )
    assert "jobs:" not in world.describe(["spark-c"])


def test_job_events_are_written_redacted_and_read_back_for_replay(tmp_path: Path) -> None:
    token = "hf_" + "Zq8x" * 9
    path = tmp_path / "t.jsonl"
    recorder = open_recorder(path, Redactor(), session_id="s1")
    world = WorldModel(on_job=job_event_listener(recorder.emit))
    command = f"HF_TOKEN={token} hf download {MODEL_REPO}"
    jobs_started(world, [{"host": "spark-b", "name": "weights", "command": command}])
    jobs_read(world, "spark-b", [JobRecord("spark-b", "weights", "exited", exit_code=1,
              elapsed_s=4, command=command, tail=f"401 for token {token}\n")])  # fmt: skip
    recorder.close()

    assert token not in path.read_text()
    loaded = read_transcript(path)
    assert not loaded.problems
    assert [(e.type, getattr(e, "kind", "")) for e in loaded.events] == [
        ("job", "start"),
        ("job", "end"),
    ]
    out = io.StringIO()
    renderer = EventRenderer(Console(file=out, width=160, color_system=None))
    for event in loaded.events:
        renderer.render(event)
    lines = out.getvalue().splitlines()
    assert lines[0].startswith("  ▶ job spark-b/weights started: HF_TOKEN=")
    assert lines[1] == "  ✗ job spark-b/weights exited 1 after 4s"
    assert "401 for token" in lines[2] and token not in out.getvalue()
