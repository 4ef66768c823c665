"""The chat face while jobs run: a progress bar per running job, moved by each progress
sample, its elapsed time counting between samples; the end (or an unknown state) printed as a
line, never a bar frozen in the scrollback; no bars where the output is not a terminal;
`/jobs` lists the session's jobs."""

from __future__ import annotations

import io
from datetime import UTC, datetime
from types import SimpleNamespace

from rich.console import Console

from agent.faces.chat import COMMANDS
from agent.faces.chat_view import ChatView
from agent.faces.job_bars import JobBars
from agent.loop.events import JobEvent, ToolCallEvent
from agent.world.model import WorldModel
from tools.world.jobs import JobFact

WAIT = ToolCallEvent(id="toolu_9", name="job_wait", input={}, hosts=["spark-b"], summary="wait")


def job(kind: str, state: str = "running", name: str = "weights", **fields: object) -> JobEvent:
    return JobEvent(kind=kind, host="spark-b", name=name, state=state,  # type: ignore[arg-type]
                    command="hf download Qwen/Qwen3.5-122B-A10B-FP8", **fields)  # fmt: skip


def terminal(out: io.StringIO, width: int = 120) -> Console:
    return Console(file=out, width=width, color_system=None, force_terminal=True)


def drawn(view: ChatView) -> str:
    out = io.StringIO()
    Console(file=out, width=120, color_system=None).print(view._renderable())
    return out.getvalue()


def test_a_running_job_gets_a_bar_that_follows_its_progress() -> None:
    out = io.StringIO()
    view = ChatView(terminal(out))
    view.on_event(WAIT)
    view.on_event(job("progress", elapsed_s=75, progress="3/14 files (21%)", fraction=0.21))
    first = drawn(view)
    view.on_event(job("progress", elapsed_s=140, progress="9/14 files (64%)", fraction=0.64))
    second = drawn(view)

    assert "spark-b/weights" in first and "1m15s" in first and "3/14 files (21%)" in first
    assert "9/14 files (64%)" in second and "2m20s" in second
    bars = [next(ln for ln in d.splitlines() if "spark-b/weights" in ln) for d in (first, second)]
    assert [bar.count("━") for bar in bars] == [5, 15]  # 21% and 64% of a 24-cell bar

    view.on_event(job("end", "exited", exit_code=0, elapsed_s=300, progress="14/14 files"))
    view.settle()
    assert "spark-b/weights" not in drawn(view)
    assert "✓ job spark-b/weights exited 0 after 5m00s · 14/14 files" in out.getvalue()


def test_an_unknown_job_leaves_the_bars_with_the_reason() -> None:
    out = io.StringIO()
    view = ChatView(Console(file=out, width=120, color_system=None))
    view.on_event(job("found", elapsed_s=10, progress="1/14 files", fraction=0.05))
    view.on_event(job("unknown", "unknown", why="spark-a (jump host) refused the connection"))
    view.settle()

    assert "? job spark-b/weights: state unknown (spark-a (jump host) refused" in out.getvalue()


def test_slash_jobs_lists_the_sessions_jobs() -> None:
    world = WorldModel()
    world.record_job(JobFact(host="spark-a", name="image", command="docker pull x",
                             state="exited", exit_code=0, elapsed_s=61,
                             seen_at=datetime.now(UTC)))  # fmt: skip
    out = io.StringIO()
    console = Console(file=out, width=140, color_system=None)
    COMMANDS["/jobs"](SimpleNamespace(world=world), console, "")  # type: ignore[arg-type]
    COMMANDS["/jobs"](SimpleNamespace(world=WorldModel()), console, "")  # type: ignore[arg-type]

    text = out.getvalue()
    assert "spark-a" in text and "image" in text and "exited 0 after 1m01s" in text
    assert text.rstrip().endswith("no jobs in this session yet")


def test_bars_are_live_only_never_left_frozen_in_the_scrollback() -> None:
    out = io.StringIO()
    view = ChatView(terminal(out))
    view.on_event(WAIT)
    view.on_event(job("progress", elapsed_s=5, progress="loading shards 0/14", fraction=0.0))
    assert "loading shards 0/14" in drawn(view)
    view.settle()  # the batch ends while the job runs on
    view._close_live()
    kept = out.getvalue().rsplit("\x1b[?25h", 1)[-1]  # what stays after the live region went
    assert "job_wait" in kept and "loading shards" not in kept


def test_piped_output_gets_no_bars_but_keeps_each_jobs_end_line() -> None:
    out = io.StringIO()
    view = ChatView(Console(file=out, width=120, color_system=None))  # not a terminal
    view.on_event(WAIT)
    view.on_event(job("progress", elapsed_s=75, progress="3/14 files (21%)", fraction=0.21))
    view.on_event(job("end", "exited", exit_code=0, elapsed_s=300, progress="14/14 files"))
    view.on_event(job("progress", "running", name="engine", elapsed_s=1, progress="loading"))
    view.settle()

    shown = out.getvalue()
    assert "━" not in shown and "3/14 files (21%)" not in shown and "loading" not in shown
    assert "✓ job spark-b/weights exited 0 after 5m00s · 14/14 files" in shown


def test_a_running_jobs_elapsed_time_counts_on_between_samples() -> None:
    now = [1000.0]
    bars = JobBars(clock=lambda: now[0])
    bars.take(job("progress", elapsed_s=75, progress="3/14 files", fraction=0.21))
    assert bars.elapsed("spark-b/weights") == "1m15s"
    now[0] += 50  # no sample for 50 s: the job still runs
    assert bars.elapsed("spark-b/weights") == "2m05s"
    bars.take(job("progress", elapsed_s=130, progress="5/14 files", fraction=0.35))
    assert bars.elapsed("spark-b/weights") == "2m10s"  # a sample sets the time again


def test_job_names_take_the_width_they_need() -> None:
    name = "copy-weights-to-spark-b-over-the-fabric"
    bars = JobBars()
    bars.take(job("progress", name=name, elapsed_s=3, progress="12%", fraction=0.12))
    wide, narrow = io.StringIO(), io.StringIO()
    Console(file=wide, width=120, color_system=None).print(bars.renderable(120))
    Console(file=narrow, width=80, color_system=None).print(bars.renderable(80))
    assert f"spark-b/{name}" in wide.getvalue()  # 47 characters, whole at 120 columns
    assert "spark-b/copy-weights-to-spark…" in narrow.getvalue()  # its progress keeps 16
    assert all(len(line) <= 80 for line in narrow.getvalue().splitlines())
