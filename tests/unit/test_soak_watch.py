"""Stall detection and the soak's other judgements, on observations as the hosts give them."""

from __future__ import annotations

from tools.deploy.proof.soak_watch import (
    Request,
    StreamWatch,
    latency_rise,
    parse_done,
    signs,
    span,
)


def test_a_stream_that_stops_growing_stalls_after_stall_s() -> None:
    watch = StreamWatch(stall_s=10.0)
    assert watch.observe(0.0, {"1": 0, "2": 0}) is None
    assert watch.observe(5.0, {"1": 400, "2": 380}) is None
    assert watch.observe(12.0, {"1": 800, "2": 380}) is None  # 2 quiet for 7 s: not yet
    stall = watch.observe(15.0, {"1": 1200, "2": 380})
    assert stall is not None
    assert (stall.stream, stall.since_s, stall.quiet_s) == ("2", 5.0, 10.0)


def test_streams_that_keep_growing_never_stall() -> None:
    watch = StreamWatch(stall_s=3.0)
    for second in range(40):
        assert watch.observe(float(second), {"1": second * 10, "2": second * 7}) is None


def test_the_longest_quiet_stream_is_the_one_named() -> None:
    watch = StreamWatch(stall_s=2.0)
    watch.observe(0.0, {"a": 1, "b": 1})
    watch.observe(1.0, {"a": 1, "b": 2})
    stall = watch.observe(4.0, {"a": 1, "b": 2})
    assert stall is not None and stall.stream == "a" and stall.quiet_s == 4.0


def test_requests_are_read_relative_to_the_first_start() -> None:
    text = "1 2000000000 3500000000 0\n2 2500000000 4000000000 28\nnot a line\n"
    assert parse_done(text, None) == [
        Request("1", 0.0, 1.5, 0),
        Request("2", 0.5, 1.5, 28),
    ]


def rising(first: float, last: float, n: int = 9) -> list[Request]:
    third = n // 3
    e2e = [first] * third + [(first + last) / 2] * (n - 2 * third) + [last] * third
    return [Request("1", float(i), v, 0) for i, v in enumerate(e2e)]


def test_latency_that_rose_half_again_is_said_with_both_medians() -> None:
    assert latency_rise(rising(2.0, 3.2)) == (2.0, 3.2)


def test_latency_that_held_or_too_few_requests_say_nothing() -> None:
    assert latency_rise(rising(2.0, 2.4)) is None
    assert latency_rise(rising(2.0, 9.0, n=5)) is None


def test_failed_requests_do_not_count_toward_latency() -> None:
    requests = rising(2.0, 2.0) + [Request("2", 99.0, 60.0, 28)] * 5
    assert latency_rise(requests) is None


def test_hang_and_crash_lines_are_found_once_each_in_order() -> None:
    log = (
        "INFO 12-06 08:00:01 [api_server.py] Started server process\n"
        "NVRM: Xid (PCI:000f:01:00): 79, pid=1234, GPU has fallen off the bus.\n"
        "spark-b:598:612 [0] NCCL WARN NET/IB : Got async event : port error\n"
        "INFO 12-06 08:00:02 [loggers.py] Avg prompt throughput: 12 tokens/s\n"
        "NVRM: Xid (PCI:000f:01:00): 79, pid=1234, GPU has fallen off the bus.\n"
        "vllm.v1.engine.exceptions.EngineDeadError: EngineCore encountered an issue.\n"
    )
    assert signs(log) == [
        "NVRM: Xid (PCI:000f:01:00): 79, pid=1234, GPU has fallen off the bus.",
        "spark-b:598:612 [0] NCCL WARN NET/IB : Got async event : port error",
        "vllm.v1.engine.exceptions.EngineDeadError: EngineCore encountered an issue.",
    ]


def test_spans_read_as_an_operator_says_them() -> None:
    assert [span(45), span(60), span(252.4), span(1800)] == [
        "45 s",
        "1 min",
        "4 min 12 s",
        "30 min",
    ]
