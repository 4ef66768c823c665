"""Fabric benchmarks as jobs: nccl-tests (`all_gather_perf` …) and perftest (`ib_write_bw` …).

The formats are read by the recon parsers (tools/recon/parsers/nccl.py, perftest.py), from
NVIDIA's and a Spark owner's captures (tests/fixtures/recon/spark_nccl_all_gather_perf_*.txt,
spark_ib_write_bw_client_rocep1s0f0.txt); here they become progress.
"""

from __future__ import annotations

from tools.jobs.progress.lines import said_lines
from tools.jobs.progress.model import Progress
from tools.recon.parsers.nccl import parse_nccl_avg_bus_bandwidth, parse_nccl_rows
from tools.recon.parsers.perftest import parse_perftest_bandwidth

NCCL_KIND = "nccl_tests"
PERFTEST_KIND = "perftest"


def read_nccl_tests(tail: str, milestones: str) -> Progress:
    text = "\n".join(said_lines(milestones + "\n" + tail))
    rows = parse_nccl_rows(text)
    average = parse_nccl_avg_bus_bandwidth(text)
    facts: dict[str, object] = {}
    parts = []
    if rows:
        last = rows[-1]
        facts.update(size_bytes=last.size_bytes, busbw_gb_s=last.busbw_gb_s)
        parts.append(f"{last.size_bytes} B: busbw {last.busbw_gb_s:g} GB/s")
    if average is not None:
        facts["avg_busbw_gb_s"] = average
        parts.append(f"avg bus bandwidth {average:g} GB/s ({average * 8:.0f} Gb/s)")
    return Progress(
        NCCL_KIND,
        ", ".join(parts) or "started, no results yet",
        1.0 if average is not None else None,
        ready=average is not None,
        facts=facts,
    )


def read_perftest(tail: str, milestones: str) -> Progress:
    text = "\n".join(said_lines(milestones + "\n" + tail))
    result = parse_perftest_bandwidth(text)
    if result is None:
        return Progress(
            PERFTEST_KIND,
            "started, no results yet",
        )
    facts = {
        "bw_average": result.average,
        "bw_peak": result.peak,
        "unit": result.unit,
        "msg_bytes": result.msg_bytes,
    }
    if result.device:
        facts["device"] = result.device
    summary = f"{result.test or 'bandwidth'}: {result.average:g} {result.unit} average"
    summary += f" ({result.msg_bytes} B messages" + (
        f", {result.device})" if result.device else ")"
    )
    return Progress(PERFTEST_KIND, summary, ready=True, facts=facts)
