"""The engine's own benchmark: `vllm bench serve` inside the serving container, as a durable job.

Scout writes no benchmark client (DESIGN rule 13): it runs the one the image ships, over a
concurrency sweep with several runs each, on random tokens (no download), with `--save-result`,
then reads the result files back. The sweep is one job (tools/jobs/) on the head, so it survives
the connection and shows progress; each run's summary lands in the job's log.
"""

from __future__ import annotations

import json
import shlex
from collections.abc import Callable
from dataclasses import dataclass, field

from tools.jobs.host import JobCommandError, job_log, start_job
from tools.jobs.waiting import wait_for_jobs
from tools.ssh.errors import SSHError
from tools.ssh.pool import SSHPool

BENCH_JOB = "scout-bench"
RESULT_DIR = "/tmp/scout-bench"
PERCENTILES = (50, 90, 99)
NO_BENCH = ("invalid choice: 'bench'", "command not found", "executable file not found")


@dataclass(frozen=True)
class Sweep:
    """What the benchmark is asked: the sweep, the runs, the request shape, the latency targets
    a good request meets (vLLM's `--goodput`)."""

    concurrency: tuple[int, ...] = (1, 4, 16)
    runs: int = 3
    input_len: int = 1024
    output_len: int = 128
    prompts_per_slot: int = 4  # prompts = max(8, this × concurrency)
    ttft_ms: float = 2000.0
    tpot_ms: float = 100.0
    tokenizer: str | None = None  # the model's path, where --served-model-name renames it

    def prompts(self, concurrency: int) -> int:
        return max(8, self.prompts_per_slot * concurrency)


@dataclass
class BenchRun:
    """The benchmark's commands, what it wrote, or why it could not run."""

    commands: list[str]
    results: list[dict] = field(default_factory=list)
    missing: str | None = None  # the image has no benchmark: why (its own words)


def bench_command(sweep: Sweep, model: str, port: int, concurrency: int, run: int) -> str:
    """One `vllm bench serve` run, as the image's own CLI takes it."""
    words = [
        "vllm", "bench", "serve", "--backend", "openai-chat", "--endpoint",
        "/v1/chat/completions", "--base-url", f"http://127.0.0.1:{port}", "--model", model,
        "--dataset-name", "random", "--random-input-len", str(sweep.input_len),
        "--random-output-len", str(sweep.output_len), "--num-prompts",
        str(sweep.prompts(concurrency)), "--max-concurrency", str(concurrency),
        "--seed", str(run), "--percentile-metrics", "ttft,tpot,itl,e2el",
        "--metric-percentiles", ",".join(map(str, PERCENTILES)), "--save-result",
        "--result-dir", RESULT_DIR, "--result-filename", result_name(concurrency, run),
        "--goodput", f"ttft:{sweep.ttft_ms:g}", f"tpot:{sweep.tpot_ms:g}",
    ]  # fmt: skip
    if sweep.tokenizer and sweep.tokenizer != model:
        words += ["--tokenizer", sweep.tokenizer]
    return shlex.join(words)


def result_name(concurrency: int, run: int) -> str:
    return f"c{concurrency}-r{run}.json"


def sweep_commands(sweep: Sweep, model: str, port: int) -> list[str]:
    return [
        bench_command(sweep, model, port, c, r)
        for c in sweep.concurrency
        for r in range(1, sweep.runs + 1)
    ]


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
    """Start the sweep as one job in `container`, wait for it, read its result files."""
    commands = sweep_commands(sweep, model, port)
    inner = " && ".join(commands)
    job = f"docker exec {shlex.quote(container)} bash -c {shlex.quote(inner)}"
    bench = BenchRun(commands)
    try:
        started = await start_job(pool, host, BENCH_JOB, job)
        if started.exists:
            bench.missing = f"a job named {BENCH_JOB} already exists on {host}"
            return bench
        outcome = await wait_for_jobs(
            pool, {host: [BENCH_JOB]}, pattern=None, first=True, timeout_s=timeout_s,
            report=report,
        )  # fmt: skip
        record = outcome.records.get((host, BENCH_JOB))
        if record is None or outcome.reason == "timeout":
            bench.missing = f"the benchmark did not end within {timeout_s:g} s"
            return bench
        if record.failed:
            log = await job_log(pool, host, BENCH_JOB, lines=5, max_bytes=2000, grep=None)
            said = (log[1] if log else record.tail).strip().splitlines()
            bench.missing = said[-1] if said else f"exit {record.exit_code}"
            return bench
        files = [f"{RESULT_DIR}/{result_name(c, r)}" for c in sweep.concurrency
                 for r in range(1, sweep.runs + 1)]  # fmt: skip
        read = await pool.run(host, f"docker exec {shlex.quote(container)} cat {' '.join(files)}")
    except (SSHError, JobCommandError) as exc:
        bench.missing = str(exc)
        return bench
    bench.results = parse_results(read.stdout)
    if len(bench.results) != len(files):
        bench.missing = f"read {len(bench.results)} of {len(files)} result files"
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
