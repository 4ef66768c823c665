"""How a soak's verdict reads at the end of the proof, and the load job it runs."""

from __future__ import annotations

import json
import shlex

from tools.deploy.proof.soak import Soak, SoakSpec, soak_command
from tools.deploy.proof.soak_watch import Request, Stall

SPEC = SoakSpec(seconds=1800, concurrency=4, stall_s=60)


def served(n: int) -> list[Request]:
    return [Request(str(i % 4 + 1), float(i), 12.0, 0) for i in range(n)]


def test_a_soak_that_held_says_so_with_its_time_and_requests() -> None:
    soak = Soak(SPEC, ran_s=1803.2, requests=served(420))
    assert soak.held
    assert soak.render() == "soak: held for 30 min 3 s under c=4, 0 stalls (420 requests)"


def test_a_stall_says_when_which_stream_and_the_logs_lines() -> None:
    soak = Soak(SPEC, ran_s=1330.0, requests=served(212), stall=Stall("3", 1262.0, 61.0))
    soak.log_lines["spark-b"] = ["[Rank 1] Watchdog caught collective operation timeout: …"]
    assert not soak.held
    assert soak.render().splitlines() == [
        "soak: STALL under c=4 at 21 min 2 s: stream 3 got no token for 1 min 1 s "
        "(212 requests finished before it)",
        "  spark-b engine log: [Rank 1] Watchdog caught collective operation timeout: …",
    ]


def test_a_stall_with_clean_logs_says_the_logs_are_clean_so_far() -> None:
    soak = Soak(SPEC, ran_s=80.0, stall=Stall("1", 10.0, 60.0))
    assert soak.render().endswith("the engine logs show no Xid/NCCL/watchdog line yet")


def test_trouble_without_a_stall_is_not_held() -> None:
    soak = Soak(SPEC, ran_s=1800.0, requests=served(9), trouble=["the engine on spark-a restarted"])
    assert not soak.held
    assert soak.render() == "soak: trouble under c=4 in 30 min: the engine on spark-a restarted"


def test_the_job_sends_fixed_length_streamed_requests_on_every_stream() -> None:
    command = soak_command(SPEC, "qwen", 8010, '"$HOME/.scout/jobs/scout-soak"')
    body = next(w for w in shlex.split(command.split("stream() {")[1]) if w.startswith("{"))
    request = json.loads(body)
    assert request["stream"] is True and request["ignore_eos"] is True
    assert (request["model"], request["max_tokens"]) == ("qwen", 256)
    assert "http://127.0.0.1:8010/v1/chat/completions" in command
    assert "while [ $k -lt 4 ]" in command
