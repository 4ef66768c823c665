"""The engine's own benchmark: `vllm bench serve` inside the serving container, as a durable job.

Scout writes no benchmark client (DESIGN rule 13): it runs the one the image ships, over a
concurrency sweep with several runs each, on random tokens (no download), with `--save-result
--save-detailed` (every request's timings, so percentiles are taken over the pooled requests of
a level, bench_pooling.py), then reads the result files back. The sweep is one job (tools/jobs/)
on the head, so it survives the connection and shows progress; each run's summary lands in the
job's log.

The method, as vLLM's benchmark and AIPerf document it:
- fresh prompts: the random dataset draws prompt i the same for the same seed whatever
  `--num-prompts` is, and the served engine caches prefixes, so every run of every level gets a
  seed no other run of this proof, nor an earlier proof (a random base), has used;
- warm-ups discarded: `--num-warmups` before each run (a long one before the sweep's first, to
  get past the engine's cold start; one round at the level's concurrency before the others).
  vLLM sends them, and its initial test request, with the run's first prompt, so that prompt is
  served from the cache when measured: it is left out of the pooled figures;
- fixed-length outputs (`--ignore-eos`), so TPOT and throughput count the asked tokens;
- enough requests, or fewer figures: `full` pools 1,000 measured requests per level (p99 rests
  on them); `quick` fits a time budget instead (bench_budget.py): a few warm-ups, timed, in a
  job of their own, then as many requests per level as the budget pays for, at most 100; the
  report gives percentiles only where 100 samples carry them, and names the levels it could
  not afford.
"""

from __future__ import annotations

import json
import shlex
from collections.abc import Callable
from dataclasses import dataclass, field, replace

from tools.deploy.proof.bench_budget import (
    CALIBRATION_PROMPTS,
    QUICK_BUDGET_S,
    BudgetPlan,
    Level,
    plan_levels,
    single_request_s,
)
from tools.jobs.host import JobCommandError, job_log, start_job
from tools.jobs.waiting import wait_for_jobs
from tools.ssh.errors import SSHError
from tools.ssh.pool import SSHPool

BENCH_JOB = "scout-bench"
WARMUP_JOB = "scout-bench-warmup"
RESULT_DIR = "/tmp/scout-bench"
PERCENTILES = (50, 90, 99)
NO_BENCH = ("invalid choice: 'bench'", "command not found", "executable file not found")
# measured requests pooled per level: AIPerf asks ≥ 1,000 for a p99 (bench_pooling.reportable)
MEASURED = {"quick": 100, "full": 1000}
# warm-ups before the sweep's first run: AIPerf's tutorial suggests tens (20–50) for production
FIRST_WARMUPS = {"quick": 16, "full": 50}
SEED_SPAN = 10**9  # a proof's seeds start at a random base below this
WARMUP_FILE = "warmup.json"


@dataclass(frozen=True)
class Sweep:
    """What the benchmark is asked: the sweep, the runs, the request shape, the latency targets
    a good request meets (vLLM's `--goodput`), how many requests (the mode) and where its seeds
    start (a base no earlier proof used, so no prompt of this one is in the engine's cache)."""

    concurrency: tuple[int, ...] = (1, 4, 16)
    runs: int = 3
    input_len: int = 1024
    output_len: int = 128
    mode: str = "quick"
    ttft_ms: float = 2000.0
    tpot_ms: float = 100.0
    tokenizer: str | None = None  # the model's path, where --served-model-name renames it
    seed_base: int = 0
    budget: BudgetPlan | None = None  # quick's levels, planned from its timed warm-ups

    def measured_levels(self) -> tuple[int, ...]:
        if self.budget is None:
            return self.concurrency
        return tuple(lv.concurrency for lv in self.budget.levels)

    def level_runs(self, concurrency: int) -> int:
        return self._level(concurrency).runs if self.budget else self.runs

    def prompts(self, concurrency: int) -> int:
        """Prompts per run: its share of the level's measured requests, and the first prompt,
        which the warm-ups repeat and the pooled figures leave out."""
        if self.budget:
            return self._level(concurrency).prompts
        return -(-MEASURED[self.mode] // self.runs) + 1

    def seed(self, concurrency: int, run: int) -> int:
        """A seed no other run of the sweep shares (seed_base itself: the timed warm-ups')."""
        return self.seed_base + self.concurrency.index(concurrency) * self.runs + run

    def warmups(self, concurrency: int, run: int) -> int:
        if self.budget:  # the timed warm-ups warmed the engine; a round at this load, once
            return self._level(concurrency).warmups if run == 1 else 0
        first = concurrency == self.concurrency[0] and run == 1
        return max(FIRST_WARMUPS[self.mode], concurrency) if first else concurrency

    def _level(self, concurrency: int) -> Level:
        assert self.budget is not None
        return next(lv for lv in self.budget.levels if lv.concurrency == concurrency)


@dataclass
class BenchRun:
    """The benchmark's commands, what it wrote, or why it could not run."""

    commands: list[str]
    results: list[dict] = field(default_factory=list)
    missing: str | None = None  # the image has no benchmark: why (its own words)
    sweep: Sweep | None = None  # as it ran: quick's with the levels its budget paid for


def bench_command(
    sweep: Sweep, model: str, port: int, concurrency: int, run: int, *, warmup: bool = False
) -> str:
    """One `vllm bench serve` run, as the image's own CLI takes it; `warmup`: quick's timed
    warm-ups, alone, on the sweep's own seed, into a file of their own."""
    prompts = CALIBRATION_PROMPTS if warmup else sweep.prompts(concurrency)
    warmups = 0 if warmup else sweep.warmups(concurrency, run)
    seed = sweep.seed_base if warmup else sweep.seed(concurrency, run)
    words = [
        "vllm", "bench", "serve", "--backend", "openai-chat", "--endpoint",
        "/v1/chat/completions", "--base-url", f"http://127.0.0.1:{port}", "--model", model,
        "--dataset-name", "random", "--random-input-len", str(sweep.input_len),
        "--random-output-len", str(sweep.output_len), "--ignore-eos", "--num-prompts",
        str(prompts), "--num-warmups", str(warmups),
        "--max-concurrency", str(concurrency), "--seed", str(seed),
        "--percentile-metrics", "ttft,tpot,itl,e2el",
        "--metric-percentiles", ",".join(map(str, PERCENTILES)), "--save-result",
        "--save-detailed", "--result-dir", RESULT_DIR, "--result-filename",
        WARMUP_FILE if warmup else result_name(concurrency, run),
        "--goodput", f"ttft:{sweep.ttft_ms:g}", f"tpot:{sweep.tpot_ms:g}",
    ]  # fmt: skip
    if sweep.tokenizer and sweep.tokenizer != model:
        words += ["--tokenizer", sweep.tokenizer]
    return shlex.join(words)


def result_name(concurrency: int, run: int) -> str:
    return f"c{concurrency}-r{run}.json"


def _runs(sweep: Sweep) -> list[tuple[int, int]]:
    return [(c, r) for c in sweep.measured_levels() for r in range(1, sweep.level_runs(c) + 1)]


def sweep_commands(sweep: Sweep, model: str, port: int) -> list[str]:
    return [bench_command(sweep, model, port, c, r) for c, r in _runs(sweep)]


async def run_bench(
    pool: SSHPool,
    host: str,
    container: str,
    model: str,
    port: int,
    sweep: Sweep,
    *,
    timeout_s: float,
    report: Callable[[str], None],
) -> BenchRun:
    """Quick: time the warm-ups first (a job of their own) and plan the levels from their pace.
    Then the sweep as one job in `container`; wait for it, read its result files."""
    where = _Where(pool, host, container, timeout_s, report)
    warmup: list[str] = []
    if sweep.mode == "quick" and sweep.budget is None:
        planned = await _budgeted(where, sweep, model, port)
        if isinstance(planned, BenchRun):
            return planned
        sweep, warmup = planned
    bench = await _job(where, BENCH_JOB, sweep_commands(sweep, model, port),
                       [result_name(c, r) for c, r in _runs(sweep)])  # fmt: skip
    bench.commands[:0] = warmup
    bench.sweep = sweep
    return bench


async def _budgeted(
    where: _Where, sweep: Sweep, model: str, port: int
) -> tuple[Sweep, list[str]] | BenchRun:
    """The timed warm-ups, and the sweep with the levels quick's budget pays for at their pace
    (with the warm-ups' command); or why they could not run."""
    command = bench_command(sweep, model, port, 1, 0, warmup=True)
    warm = await _job(where, WARMUP_JOB, [command], [WARMUP_FILE])
    single_s = single_request_s(warm.results[0].get("latencies", [])) if warm.results else None
    if warm.missing or single_s is None:
        return BenchRun(warm.commands, missing=warm.missing or "the warm-ups timed nothing")
    spent = float(warm.results[0].get("duration", 0.0)) + single_s  # and its initial test
    budget = plan_levels(sweep.concurrency, sweep.runs, single_s, QUICK_BUDGET_S - spent)
    where.report(
        f"warm-ups: {single_s:.1f} s a request; quick measures "
        + ", ".join(f"c={lv.concurrency}: {lv.measured}" for lv in budget.levels)
    )
    return replace(sweep, budget=budget), [command]


@dataclass(frozen=True)
class _Where:
    pool: SSHPool
    host: str
    container: str
    timeout_s: float
    report: Callable[[str], None]


async def _job(where: _Where, name: str, commands: list[str], names: list[str]) -> BenchRun:
    """`commands` as one job named `name` in the container, then the result files `names`."""
    pool, host = where.pool, where.host
    job = f"docker exec {shlex.quote(where.container)} bash -c {shlex.quote(' && '.join(commands))}"
    bench = BenchRun(list(commands))
    try:
        started = await start_job(pool, host, name, job)
        if started.exists:
            bench.missing = f"a job named {name} already exists on {host}"
            return bench
        outcome = await wait_for_jobs(
            pool, {host: [name]}, pattern=None, first=True, timeout_s=where.timeout_s,
            report=where.report,
        )  # fmt: skip
        record = outcome.records.get((host, name))
        if record is None or outcome.reason == "timeout":
            bench.missing = f"the benchmark did not end within {where.timeout_s:g} s"
            return bench
        if record.failed:
            log = await job_log(pool, host, name, lines=5, max_bytes=2000, grep=None)
            said = (log[1] if log else record.tail).strip().splitlines()
            bench.missing = said[-1] if said else f"exit {record.exit_code}"
            return bench
        files = " ".join(f"{RESULT_DIR}/{n}" for n in names)
        read = await pool.run(host, f"docker exec {shlex.quote(where.container)} cat {files}")
    except (SSHError, JobCommandError) as exc:
        bench.missing = str(exc)
        return bench
    bench.results = parse_results(read.stdout)
    if len(bench.results) != len(names):
        bench.missing = f"read {len(bench.results)} of {len(names)} result files"
    return bench


def parse_results(text: str) -> list[dict]:
    """Result files concatenated by `cat`: one JSON object each, no separator needed."""
    decoder, found, i = json.JSONDecoder(), [], 0
    while i < len(text):
        if text[i].isspace():
            i += 1
            continue
        try:
            obj, i = decoder.raw_decode(text, i)
        except ValueError:
            break
        if isinstance(obj, dict):
            found.append(obj)
    return found


def image_lacks_bench(why: str | None) -> bool:
    return bool(why) and any(mark in (why or "") for mark in NO_BENCH)
