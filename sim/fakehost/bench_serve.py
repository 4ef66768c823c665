"""`vllm bench serve` inside an engine container: the real tool's summary and its result file.

Format: vLLM 0.20's `vllm bench serve` (the summary block between `=` rules, `--save-result`
writing one JSON object to `--result-dir/--result-filename` with `mean_/median_/std_/pNN_`
`ttft|tpot|itl|e2el_ms`, `request_goodput` when `--goodput` is given; a real file is
tests/fixtures/bench/vllm_bench_serve_0.20.0_qwen3_8b_c1.json).

Latencies are paced, not measured over HTTP: from the serving container's record (its scenario's
single-stream rate and time to first token) and how two Sparks share decode among concurrent
requests in published runs (inference-atlas PR #112, FP8 TP=2: ~30 tok/s single stream, TTFT p50
~0.48 s, ~140 tok/s aggregate at 16 concurrent: aggregate ∝ N^0.556, pace.stream_rate), the same
rates the container's HTTP endpoint streams at (sim/engine/pacing.py).
A run takes its simulated duration divided by the scenario's time_scale.
"""

from __future__ import annotations

import json
import math
import random
import re
import sys
import time
from typing import Any

from .container import Container
from .container_files import container_path
from .pace import stream_rate, time_scale
from .serve_spec import options
from .state import read_state

TTFT_GROWTH = 0.25  # TTFT ∝ N^0.25 under load: an assumption, the published run gives N=1 only
JITTER = 0.04
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
    rng = random.Random(int(o.get("--seed", "0")))
    requests = [_request(record, c, osl, rng) for _ in range(n)]
    duration = sum(max(r["e2el"] for r in requests[i : i + c]) for i in range(0, n, c)) / 1000
    time.sleep(min(duration / time_scale(state), 30.0))
    percentiles = [float(p) for p in o.get("--metric-percentiles", "99").split(",")]
    targets = _goodput(args)
    result = _result(o, record, requests, duration, c, isl, osl, percentiles, targets)
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
            return record
    return None


def _request(record: dict[str, Any], c: int, osl: int, rng: random.Random) -> dict[str, Any]:
    step = 1000 / stream_rate(float(record["tok_s"]), c)
    ttft = float(record["ttft_s"]) * 1000 * c**TTFT_GROWTH * (1 + rng.gauss(0, JITTER))
    itls = [step * (1 + abs(rng.gauss(0, JITTER))) for _ in range(osl - 1)]
    tpot = sum(itls) / len(itls) if itls else 0.0
    return {"ttft": ttft, "itls": itls, "tpot": tpot, "e2el": ttft + sum(itls)}


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
    osl: int,
    percentiles: list[float],
    targets: dict[str, float],
) -> dict[str, Any]:
    n = len(requests)
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
        "total_output_tokens": n * osl,
        "request_throughput": n / duration,
        "request_goodput": good / duration if targets else None,
        "output_throughput": n * osl / duration,
        "total_token_throughput": n * (isl + osl) / duration,
        "max_output_tokens_per_s": float(math.ceil(c * 1000 / requests[0]["tpot"])),
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
