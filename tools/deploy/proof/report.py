"""The proof's report: the benchmark's result files summed up per concurrency, over runs.

Each level's latencies are percentiles of its pooled requests (bench_pooling.py), shown only
where they rest on enough samples; per-user speed is 1000 ÷ the pooled median TPOT; aggregate
output throughput and requests/s are the level's tokens and requests over its runs' time; the
spread is the runs' own throughputs (range, and a 95 % confidence interval) and their TTFT
medians (95 % interval). Written as a terminal table, a self-contained HTML chart (inline SVG:
aggregate throughput against per-user speed) and JSON.
"""

from __future__ import annotations

import hashlib
import html
import json
import statistics
import textwrap
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from tools.deploy.proof.bench_pooling import MIN_SAMPLES, ci95, good_share, percentiles, pooled
from tools.deploy.proof.physics import Ceiling
from tools.text.new_files import create_together, on_file

PERCENTILES = (50, 90, 99)
WIDTH = 96  # the report's lines fit a 100-column terminal


@dataclass
class Row:
    concurrency: int
    runs: int
    ttft_ms: dict[str, float | None]
    tpot_ms: dict[str, float | None]
    itl_ms: dict[str, float | None]
    tok_s_per_user: float | None
    tok_s_aggregate: float
    req_s: float
    goodput_req_s: float | None
    spread_pct: float
    requests: int = 0  # measured requests pooled (the percentiles' sample)
    left_out: int = 0  # served from the prefix cache by the benchmark's own warm-ups
    tok_s_ci: float | None = None  # 95 % CI half-width of the runs' aggregate throughput
    ttft_ci_ms: float | None = None  # 95 % CI half-width of the runs' TTFT medians
    ttft_run_ms: float | None = None  # the mean of the runs' TTFT medians
    # under 100 pooled requests no percentile is honest: the mean and its 95 % CI instead
    ttft_mean_ms: float | None = None
    ttft_mean_ci_ms: float | None = None
    tpot_mean_ms: float | None = None
    tpot_mean_ci_ms: float | None = None


@dataclass
class Report:
    source: str  # "vllm bench serve" or Scout's own measurement, labelled
    rows: list[Row]
    targets: dict[str, float]
    ceiling: Ceiling | str
    flag: str | None
    fingerprint: dict[str, Any] = field(default_factory=dict)
    method: str = ""  # the mode and what it can report, in words
    unmeasured: dict[int, str] = field(default_factory=dict)  # concurrency → why not (quick)


def _median(values: list[float | None]) -> float | None:
    known = [v for v in values if v is not None]
    return statistics.median(known) if known else None


def summarise(results: list[dict[str, Any]], targets: dict[str, float] | None = None) -> list[Row]:
    """One row per concurrency, from every run's result file: pooled where the files hold every
    request's timings, else throughput only (no percentile of runs' percentiles)."""
    by_c: dict[int, list[dict[str, Any]]] = {}
    for result in results:
        by_c.setdefault(int(result.get("max_concurrency") or 1), []).append(result)
    rows = []
    for c, runs in sorted(by_c.items()):
        aggregate = [float(r["output_throughput"]) for r in runs]
        duration = sum(float(r["duration"]) for r in runs)
        middle = statistics.median(aggregate)
        row = Row(
            concurrency=c,
            runs=len(runs),
            ttft_ms=dict.fromkeys(map(_p, PERCENTILES)),
            tpot_ms=dict.fromkeys(map(_p, PERCENTILES)),
            itl_ms=dict.fromkeys(map(_p, PERCENTILES)),
            tok_s_per_user=None,
            tok_s_aggregate=sum(float(r["total_output_tokens"]) for r in runs) / duration,
            req_s=sum(int(r["completed"]) for r in runs) / duration,
            goodput_req_s=_median([r.get("request_goodput") for r in runs]),
            spread_pct=100 * (max(aggregate) - min(aggregate)) / middle if middle else 0.0,
            requests=sum(int(r["completed"]) for r in runs),
            tok_s_ci=ci95(aggregate),
        )
        pool = pooled(runs)
        if pool is None:
            tpot = _median([r.get("median_tpot_ms") for r in runs])
            row.tok_s_per_user = 1000 / tpot if tpot else None
        else:
            row.requests, row.left_out = len(pool.ttft), pool.left_out
            row.ttft_ms = percentiles(pool.ttft, PERCENTILES)
            row.tpot_ms = percentiles(pool.tpot, PERCENTILES)
            row.itl_ms = percentiles(pool.itl, PERCENTILES)
            few = len(pool.tpot) < MIN_SAMPLES  # a median is a percentile too: the mean then
            middle_tpot = statistics.mean if few else statistics.median
            row.tok_s_per_user = 1000 / middle_tpot(pool.tpot) if pool.tpot else None
            if len(pool.ttft) < MIN_SAMPLES and pool.ttft:
                row.ttft_mean_ms, row.ttft_mean_ci_ms = statistics.mean(pool.ttft), ci95(pool.ttft)
            if few and pool.tpot:
                row.tpot_mean_ms, row.tpot_mean_ci_ms = statistics.mean(pool.tpot), ci95(pool.tpot)
            share = good_share(pool, targets or {})
            if share is not None:
                row.goodput_req_s = share * row.req_s
            if pool.run_ttft_medians:
                row.ttft_run_ms = statistics.mean(pool.run_ttft_medians)
                row.ttft_ci_ms = ci95(pool.run_ttft_medians)
        rows.append(row)
    return rows


def _p(p: int) -> str:
    return f"p{p}"


def _ms(values: dict[str, float | None], mean: float | None = None, ci: float | None = None) -> str:
    """The percentiles, or, where none rests on enough samples, the mean ± its 95 % CI."""
    if mean is not None and all(v is None for v in values.values()):
        return f"{_pm(mean, ci)} mean"
    return "/".join("–" if v is None else f"{v:.0f}" for v in values.values())


def _pm(value: float | None, ci: float | None, unit: str = "") -> str:
    if value is None:
        return "–"
    return f"{value:.0f}{unit}" if ci is None else f"{value:.0f} ± {ci:.0f}{unit}"


def render_table(report: Report) -> str:
    head = (
        f"{'c':>3} {'n':>5} {'TTFT ms p50/90/99':>17} {'TPOT ms p50/90/99':>17} "
        f"{'ITL ms p50/90/99':>16} {'t/s/user':>8} {'t/s all':>7} {'±95%':>5} {'req/s':>5} "
        f"{'good':>5}"
    )
    lines = [f"proof: {report.source} (percentiles of pooled requests; t/s = output tokens/s):"]
    if report.method:
        lines += textwrap.wrap(f"method: {report.method}", WIDTH, subsequent_indent="  ")
    lines.append(head)
    for r in report.rows:
        user = "–" if r.tok_s_per_user is None else f"{r.tok_s_per_user:.1f}"
        good = "–" if r.goodput_req_s is None else f"{r.goodput_req_s:.2f}"
        ci = "–" if r.tok_s_ci is None else f"{r.tok_s_ci:.1f}"
        ttft = _ms(r.ttft_ms, r.ttft_mean_ms, r.ttft_mean_ci_ms)
        tpot = _ms(r.tpot_ms, r.tpot_mean_ms, r.tpot_mean_ci_ms)
        lines.append(
            f"{r.concurrency:>3} {r.requests:>5} {ttft:>17} {tpot:>17} "
            f"{_ms(r.itl_ms):>16} {user:>8} {r.tok_s_aggregate:>7.1f} {ci:>5} {r.req_s:>5.2f} "
            f"{good:>5}"
        )
    runs = [f"c={r.concurrency} {_pm(r.ttft_run_ms, r.ttft_ci_ms, ' ms')}" for r in report.rows
            if r.ttft_run_ms is not None]  # fmt: skip
    if runs:
        said = "TTFT median per run, mean ± 95 % CI over the runs: " + " · ".join(runs)
        lines += textwrap.wrap(said, WIDTH, subsequent_indent="  ")
    lines += textwrap.wrap(
        "n: measured requests pooled; – : a percentile with under 100 samples or under 10 "
        "beyond it (p99 needs 1,000); ±95%: confidence interval of t/s all over the runs",
        WIDTH,
        subsequent_indent="  ",
    )
    few = [f"c={r.concurrency} n={r.requests}" for r in report.rows if r.ttft_mean_ms is not None]
    if few:
        said = (
            f"{', '.join(few)}: under {MIN_SAMPLES} samples, so no percentiles: the mean ± "
            "95 % CI of the requests instead, and t/s/user from the mean TPOT"
        )
        lines += textwrap.wrap(said, WIDTH, subsequent_indent="  ")
    for c, why in report.unmeasured.items():
        lines += textwrap.wrap(
            f"c={c}: NOT MEASURED in quick: {why}", WIDTH, subsequent_indent="  "
        )
    if report.targets:
        said = ", ".join(f"{k} ≤ {v:g} ms" for k, v in report.targets.items())
        lines.append(f"good: requests/s meeting {said}")
    if isinstance(report.ceiling, Ceiling):
        lines.append(
            f"single-stream ceiling {report.ceiling.tok_s:.1f} tok/s ({report.ceiling.basis})"
        )
    else:
        lines.append(f"single-stream ceiling: not stated ({report.ceiling})")
    if report.flag:
        lines.append(f"FLAG: {report.flag}")
    return "\n".join(lines)


def command_hash(command: str) -> str:
    return "sha256:" + hashlib.sha256(command.encode()).hexdigest()[:16]


def to_json(report: Report) -> dict[str, Any]:
    ceiling = report.ceiling
    return {
        "source": report.source,
        "method": report.method,
        "unmeasured": {str(c): why for c, why in report.unmeasured.items()},
        "rows": [asdict(r) for r in report.rows],
        "goodput_targets_ms": report.targets,
        "ceiling": asdict(ceiling) if isinstance(ceiling, Ceiling) else {"unstated": ceiling},
        "flag": report.flag,
        "fingerprint": report.fingerprint,
    }


def chart_html(report: Report) -> str:
    """Aggregate throughput against per-user speed across the sweep, as inline SVG."""
    points = [(r.tok_s_per_user or 0.0, r.tok_s_aggregate, r.concurrency) for r in report.rows]
    width, height, pad = 560, 360, 50
    max_x = max((p[0] for p in points), default=1.0) * 1.15 or 1.0
    max_y = max((p[1] for p in points), default=1.0) * 1.15 or 1.0

    def xy(x: float, y: float) -> tuple[float, float]:
        return (pad + x / max_x * (width - 2 * pad), height - pad - y / max_y * (height - 2 * pad))

    path = " ".join(f"{'M' if i == 0 else 'L'}{xy(x, y)[0]:.1f},{xy(x, y)[1]:.1f}"
                    for i, (x, y, _c) in enumerate(points))  # fmt: skip
    dots = "".join(
        f'<circle cx="{xy(x, y)[0]:.1f}" cy="{xy(x, y)[1]:.1f}" r="4"/>'
        f'<text x="{xy(x, y)[0] + 6:.1f}" y="{xy(x, y)[1] - 6:.1f}">c={c}</text>'
        for x, y, c in points
    )
    title = html.escape(f"{report.fingerprint.get('model', '')} · {report.source}")
    return (
        "<!doctype html><meta charset='utf-8'><title>Scout proof</title>"
        f"<h3 style='font-family:sans-serif'>{title}</h3>"
        f"<svg xmlns='http://www.w3.org/2000/svg' width='{width}' height='{height}' "
        "font-family='sans-serif' font-size='12'>"
        f"<line x1='{pad}' y1='{height - pad}' x2='{width - pad}' y2='{height - pad}' "
        "stroke='#000'/>"
        f"<line x1='{pad}' y1='{pad}' x2='{pad}' y2='{height - pad}' stroke='#000'/>"
        f"<text x='{width / 2 - 60}' y='{height - 15}'>tok/s per user</text>"
        f"<text x='10' y='{pad - 15}'>tok/s aggregate</text>"
        f"<path d='{path}' fill='none' stroke='#1f77b4' stroke-width='2'/>"
        f"<g fill='#1f77b4'>{dots}</g></svg>"
        f"<pre>{html.escape(render_table(report))}</pre>"
    )


def write_files(report: Report, folder: Path, prefix: str) -> tuple[Path, Path]:
    """The chart and the JSON, beside the session's transcript, under one stem of their own
    (`prefix`, a stamp, a token), created exclusively: a proof never overwrites another's."""
    (chart, chart_file), (data, data_file) = create_together(folder, prefix, (".html", ".json"))
    writing = chart
    try:
        with chart_file, data_file:
            chart_file.write(chart_html(report))
            chart_file.flush()
            writing = data
            data_file.write(json.dumps(to_json(report), indent=2))
            data_file.flush()
    except OSError as exc:  # disk full (also as a file closes): the message names the file
        raise on_file(exc, writing) from exc
    return chart, data
