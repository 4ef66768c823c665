"""`vllm bench serve` inside an engine container: the real tool's summary and its result file.

Format: vLLM 0.20's `vllm bench serve` (the summary block between `=` rules, `--save-result`
writing one JSON object to `--result-dir/--result-filename` with `mean_/median_/std_/pNN_`
`ttft|tpot|itl|e2el_ms`, `request_goodput` when `--goodput` is given; a real file is
tests/fixtures/bench/vllm_bench_serve_0.20.0_qwen3_8b_c1.json).

Latencies are paced, not measured over HTTP: from the serving container's record (its scenario's
single-stream rate and time to first token) and how two Sparks share decode among concurrent
requests in published runs (inference-atlas PR #112, FP8 TP=2: ~30 tok/s single stream, TTFT p50
~0.48 s, ~140 tok/s aggregate at 16 concurrent: aggregate ∝ N^0.556, pace.stream_rate), with
what a real engine adds (latency_effects.py): prompts it served before come from its
prefix cache, its first requests are slow, arrivals stretch the decodes they join, runs differ.
The engine's memory of all that is shared with its HTTP server and kept between runs, with the
simulated seconds its benchmark runs took all told (`busy_s`: the initial test request and the
warm-ups too, which a real engine serves as it serves the measured ones).

As the real tool does (vllm/benchmarks/serve.py), every run first sends the dataset's first
prompt once (the initial test run, alone) and again `--num-warmups` times (at most
`--max-concurrency` at once), unmeasured but taking their time; the random
dataset's prompt i is the same for the same `--seed` and `--random-input-len` whatever
`--num-prompts` is; without `--ignore-eos` a request may stop before `--random-output-len`
(how often is an assumption); `--save-detailed` keeps the per-request lists.
A run takes its simulated duration divided by the scenario's time_scale.
"""

from __future__ import annotations

import heapq
import json
import math
import random
import re
import sys
import time
from typing import Any

from . import latency_effects as effects
from .container import Container
from .container_files import container_path
from .pace import time_scale
from .serve_spec import options
from .state import read_state

EARLY_EOS_SHARE = 0.3  # without --ignore-eos, the share of requests that stop early (assumption)
DETAILED = ("input_lens", "output_lens", "ttfts", "itls", "latencies", "start_times", "errors")
METRICS = ("ttft", "tpot", "itl", "e2el")
TITLES = {
    "ttft": ("Time to First Token", "TTFT"),
    "tpot": ("Time per Output Token (excl. 1st token)", "TPOT"),
    "itl": ("Inter-token Latency", "ITL"),
    "e2el": ("End-to-end Latency", "E2EL"),
}


def has_bench(version: str) -> bool:
    """`vllm bench` came with vLLM 0.9 (proposed in vllm-project/vllm#13840, Feb 2025; listed
    in 0.9's usage line `{chat,complete,serve,bench,collect-env,run-batch}`, vast-data/VUA#7)."""
    found = re.match(r"(\d+)\.(\d+)", version)
    return not found or (int(found.group(1)), int(found.group(2))) >= (0, 9)


def run_bench(args: list[str], ctr: Container) -> int:
    if not has_bench(ctr.packages().get("vllm", "")):
        sys.stderr.write(
            "usage: vllm [-h] [-v] {chat,complete,serve} ...\nvllm: error: argument subparser: "
            "invalid choice: 'bench' (choose from 'chat', 'complete', 'serve')\n"
        )
        return 2
    if args[:1] != ["serve"]:
        sys.stderr.write("usage: vllm bench [-h] {latency,serve,throughput} ...\n")
        return 2
    _positional, o = options(args[1:])
    state = read_state(ctr.host_dir)
    port = int(o.get("--port") or o.get("--base-url", "http://127.0.0.1:8000").rsplit(":", 1)[1])
    record = _serving(state, port)
    if record is None:
        sys.stderr.write(f"ConnectionRefusedError: [Errno 111] Connect call failed "
                         f"('127.0.0.1', {port})\n")  # fmt: skip
        return 1
    c = int(o.get("--max-concurrency", "1"))
    n = int(o.get("--num-prompts", "1000"))
    isl, osl = int(o.get("--random-input-len", "1024")), int(o.get("--random-output-len", "128"))
    seed = int(o.get("--seed", "0"))
    warmups = int(o.get("--num-warmups", "0"))
    path = effects.memory_path(ctr.host_dir, record["container_id"], record.get("pid"))
    with effects.remembered(path) as memory:
        memory.runs += 1
        rng = random.Random(f"{seed}:{memory.runs}")
        lengths = [osl if "--ignore-eos" in o or rng.random() >= EARLY_EOS_SHARE
                   else rng.randint(1, osl) for _ in range(n)]  # fmt: skip
        # the initial test run, alone, then the warm-ups `c` at a time: prompt 0 every time
        before = [(memory.hit(_prompt_key(seed, 0, isl), isl), memory.serve())
                  for _ in range(1 + warmups)]  # fmt: skip
        served = [(memory.hit(_prompt_key(seed, i, isl), isl), memory.serve()) for i in range(n)]
        initial = _requests(record, 1, isl, [osl], before[:1], rng)
        warming = _requests(record, c, isl, [osl] * warmups, before[1:], rng)
        requests = _requests(record, c, isl, lengths, served, rng)
        duration, starts = _schedule(requests, c)
        unmeasured = initial[0]["e2el"] / 1000 + (_schedule(warming, c)[0] if warming else 0.0)
        memory.busy_s += unmeasured + duration  # what the engine spent on this run, all told
    time.sleep(min((unmeasured + duration) / time_scale(state), 30.0))
    percentiles = [float(p) for p in o.get("--metric-percentiles", "99").split(",")]
    targets = _goodput(args)
    result = _result(o, record, requests, duration, c, isl, percentiles, targets)
    if "--save-detailed" in o:
        result |= _detailed(requests, starts, isl)
    _print(result, percentiles, bool(targets))
    if "--save-result" in o:
        folder = o.get("--result-dir", ".")
        name = o.get("--result-filename") or f"vllm-{c}concurrency-{time.strftime('%Y%m%d')}.json"
        path = container_path(ctr.host_dir, ctr.id, f"{folder.rstrip('/')}/{name}")
        if path is not None:
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(json.dumps(result))
    return 0


def _serving(state: dict[str, Any], port: int) -> dict[str, Any] | None:
    """The `serve` record of the running container whose API server listens on `port`."""
    for c in state["docker"]["containers"].values():
        record = c.get("serve") or {}
        if c["state"] == "running" and record.get("role") == "api" and record["port"] == port:
            return {**record, "container_id": c["id"]}
    return None


def _prompt_key(seed: int, index: int, input_len: int) -> str:
    """The random dataset's prompt `index` for this seed and length: the same in every run."""
    return f"random:{input_len}:{seed}:{index}"


def _requests(
    record: dict[str, Any],
    c: int,
    isl: int,
    lengths: list[int],
    served: list[tuple[bool, float]],
    rng: random.Random,
) -> list[dict[str, Any]]:
    """Each request's timing: whether its prompt was cached, how cold the engine was, this run's
    factor, and the prefills of the c − 1 requests that start while it decodes."""
    ttft_s, tok_s = float(record["ttft_s"]), float(record["tok_s"])
    factor = effects.run_factor(rng)
    prefills = [0.0 if cached else effects.prefill_ms(ttft_s, isl) for cached, _ in served]
    requests = []
    for i, ((cached, cold), osl) in enumerate(zip(served, lengths, strict=True)):
        timing = effects.request_timing(
            ttft_s=ttft_s, tok_s=tok_s, concurrency=c, input_len=isl, output_len=osl,
            cached=cached, cold=cold, run_factor=factor,
            arrivals_prefill_ms=prefills[i + 1 : i + c], rng=rng,
        )  # fmt: skip
        tpot = sum(timing.itls) / len(timing.itls) if timing.itls else 0.0
        requests.append({"ttft": timing.ttft, "itls": timing.itls, "tpot": tpot,
                         "e2el": timing.e2el, "osl": osl})  # fmt: skip
    return requests


def _schedule(requests: list[dict[str, Any]], c: int) -> tuple[float, list[float]]:
    """`--max-concurrency c`: each request starts when one of c slots frees (seconds)."""
    free = [0.0] * max(c, 1)
    starts = []
    for r in requests:
        start = heapq.heappop(free)
        starts.append(start)
        heapq.heappush(free, start + r["e2el"] / 1000)
    return max(free), starts


def _detailed(requests: list[dict[str, Any]], starts: list[float], isl: int) -> dict[str, Any]:
    """`--save-detailed`: the per-request lists, in seconds, as vLLM writes them."""
    return {
        "input_lens": [isl] * len(requests),
        "output_lens": [r["osl"] for r in requests],
        "ttfts": [r["ttft"] / 1000 for r in requests],
        "itls": [[x / 1000 for x in r["itls"]] for r in requests],
        "latencies": [r["e2el"] / 1000 for r in requests],
        "start_times": starts,
        "errors": [""] * len(requests),
    }


def _goodput(args: list[str]) -> dict[str, float]:
    """`--goodput ttft:MS tpot:MS e2el:MS` (the values after the flag, up to the next flag)."""
    if "--goodput" not in args:
        return {}
    found = {}
    for word in args[args.index("--goodput") + 1 :]:
        if word.startswith("-"):
            break
        key, _, value = word.partition(":")
        found[key] = float(value)
    return found


def percentile(values: list[float], p: float) -> float:
    """numpy.percentile's linear interpolation, as vLLM computes its pNN figures."""
    ordered = sorted(values)
    k = (len(ordered) - 1) * p / 100
    low, high = math.floor(k), math.ceil(k)
    return ordered[low] + (ordered[high] - ordered[low]) * (k - low)


def _result(
    o: dict[str, str],
    record: dict[str, Any],
    requests: list[dict[str, Any]],
    duration: float,
    c: int,
    isl: int,
    percentiles: list[float],
    targets: dict[str, float],
) -> dict[str, Any]:
    n = len(requests)
    output = sum(r["osl"] for r in requests)
    min_tpot = min((r["tpot"] for r in requests if r["tpot"]), default=1e9)
    good = sum(all(r[k] <= v for k, v in targets.items()) for r in requests)
    result: dict[str, Any] = {
        "date": time.strftime("%Y%m%d-%H%M%S"),
        "endpoint_type": o.get("--backend", "openai"),
        "backend": o.get("--backend", "openai"),
        "label": None,
        "model_id": o.get("--model", record["model"]),
        "tokenizer_id": o.get("--model", record["model"]),
        "num_prompts": n,
        "request_rate": "inf",
        "burstiness": 1.0,
        "max_concurrency": c,
        "duration": duration,
        "completed": n,
        "failed": 0,
        "total_input_tokens": n * isl,
        "total_output_tokens": output,
        "request_throughput": n / duration,
        "request_goodput": good / duration if targets else None,
        "output_throughput": output / duration,
        "total_token_throughput": (n * isl + output) / duration,
        "max_output_tokens_per_s": float(math.ceil(c * 1000 / min_tpot)),
        "max_concurrent_requests": c,
        "rtfx": 0.0,
    }
    for metric in METRICS:
        values = (
            [x for r in requests for x in r["itls"]]
            if metric == "itl"
            else [r[metric] for r in requests]
        )
        mean = sum(values) / len(values)
        result[f"mean_{metric}_ms"] = mean
        result[f"median_{metric}_ms"] = percentile(values, 50)
        std = math.sqrt(sum((v - mean) ** 2 for v in values) / len(values))
        result[f"std_{metric}_ms"] = std
        for p in percentiles:
            result[f"p{p:g}_{metric}_ms"] = percentile(values, p)
    return result


def _print(result: dict[str, Any], percentiles: list[float], goodput: bool) -> None:
    c, n = result["max_concurrency"], result["num_prompts"]
    print("Traffic request rate: inf\nBurstiness factor: 1.0 (Poisson process)")
    print(f"Maximum request concurrency: {c}")
    print(f"100%|██████████| {n}/{n} [{_clock(result['duration'])}<00:00]")
    rows = [
        ("Successful requests:", result["completed"]),
        ("Failed requests:", result["failed"]),
        ("Maximum request concurrency:", c),
        ("Benchmark duration (s):", f"{result['duration']:.2f}"),
        ("Total input tokens:", result["total_input_tokens"]),
        ("Total generated tokens:", result["total_output_tokens"]),
        ("Request throughput (req/s):", f"{result['request_throughput']:.2f}"),
    ]
    if goodput:
        rows.append(("Request goodput (req/s):", f"{result['request_goodput']:.2f}"))
    rows += [
        ("Output token throughput (tok/s):", f"{result['output_throughput']:.2f}"),
        ("Peak output token throughput (tok/s):", f"{result['max_output_tokens_per_s']:.2f}"),
        ("Peak concurrent requests:", f"{result['max_concurrent_requests']:.2f}"),
        ("Total Token throughput (tok/s):", f"{result['total_token_throughput']:.2f}"),
    ]
    print("{s:{c}^{n}}".format(s=" Serving Benchmark Result ", n=50, c="="))
    for label, value in rows:
        print(f"{label:<40}{value:<10}")
    for metric in METRICS:
        title, short = TITLES[metric]
        print("{s:{c}^{n}}".format(s=title, n=50, c="-"))
        print(f"{f'Mean {short} (ms):':<40}{result[f'mean_{metric}_ms']:<10.2f}")
        print(f"{f'Median {short} (ms):':<40}{result[f'median_{metric}_ms']:<10.2f}")
        for p in percentiles:
            print(f"{f'P{p:g} {short} (ms):':<40}{result[f'p{p:g}_{metric}_ms']:<10.2f}")
    print("=" * 50, flush=True)


def _clock(seconds: float) -> str:
    return f"{int(seconds // 60):02d}:{int(seconds % 60):02d}"
