"""What the faces print, line by line: headlines that never split a number, plurals, no padding."""

from __future__ import annotations

import io

from rich.console import Console
from rich.table import Table

from agent.faces.console import TrimmedWriter
from agent.faces.doctor import docker_check
from agent.faces.render import EventRenderer, dotted_lines, print_dotted
from agent.loop.events import SessionEnd
from tests.support.captures import capture

HEADLINE = (
    "health ok · model Qwen/Qwen3.5-122B-A10B-FP8 · single stream 23.4 tok/s, TTFT 0.31 s · "
    "4 streams 58.6 tok/s aggregate"
)


def test_a_headline_breaks_between_its_parts_at_100_columns() -> None:
    out = io.StringIO()
    print_dotted(Console(file=out, width=100), HEADLINE)
    assert out.getvalue().splitlines() == [
        "health ok · model Qwen/Qwen3.5-122B-A10B-FP8 · single stream 23.4 tok/s, TTFT 0.31 s",
        "4 streams 58.6 tok/s aggregate",
    ]


def test_a_headline_that_fits_stays_one_line() -> None:
    assert dotted_lines(HEADLINE, 160) == [HEADLINE]
    assert dotted_lines("a · b", 3) == ["a", "b"]


def test_session_end_counts_in_the_singular_when_there_is_one() -> None:
    out = io.StringIO()
    renderer = EventRenderer(Console(file=out, width=120))
    usage = {"turns": 1, "output_tokens": 1, "cost_usd": 0.0}
    renderer.render(SessionEnd(outcome="done", usage=usage))
    assert "1 model turn · input 0 tokens" in out.getvalue()
    usage = {"turns": 14, "output_tokens": 1760, "cost_usd": 0.0}
    renderer.render(SessionEnd(outcome="done", usage=usage))
    assert "14 model turns · input" in out.getvalue()


def test_piped_tables_and_text_carry_no_trailing_spaces() -> None:
    out = io.StringIO()
    console = Console(file=TrimmedWriter(out), width=80)
    table = Table.grid(padding=(0, 1))
    table.add_column(width=10)
    table.add_column(width=10)
    table.add_row("a", "b")
    console.print(table)
    console.print("kept  inner  spaces", end="   ")
    console.print("and the line goes on")
    assert out.getvalue() == "a          b\nkept  inner  spaces   and the line goes on\n"


def test_doctor_reads_docker_info_as_a_spark_prints_it() -> None:
    check = docker_check("spark-a", 0, capture("spark_docker_info_head40.txt"))
    assert (
        check.ok and check.detail == "Docker 29.2.1 answers; runtimes: io.containerd.runc.v2 runc"
    )
    denied = (
        "Client:\n Version: 29.2.1\n\nServer:\npermission denied while trying to connect to the "
        "Docker daemon socket at unix:///var/run/docker.sock: dial unix /var/run/docker.sock: "
        "connect: permission denied"
    )
    assert "usermod -aG docker" in docker_check("spark-a", 1, denied).fix
