"""Scout's benchmark method before issue 38, kept only so tests can show what it got wrong.

Every level reused seeds 1..runs (so the random dataset's first prompts of a level were the
previous level's, already in the engine's prefix cache), sent max(8, 4 × c) prompts with no
warm-up and no --ignore-eos, and summed a level up as the median of its runs' own p50s.
"""

from __future__ import annotations

import shlex
import statistics

from tools.deploy.proof.engine_bench import RESULT_DIR, parse_results
from tools.ssh.pool import SSHPool


def old_command(model: str, port: int, concurrency: int, run: int) -> str:
    return shlex.join([
        "vllm", "bench", "serve", "--backend", "openai-chat", "--endpoint",
        "/v1/chat/completions", "--base-url", f"http://127.0.0.1:{port}", "--model", model,
        "--dataset-name", "random", "--random-input-len", "1024", "--random-output-len", "128",
        "--num-prompts", str(max(8, 4 * concurrency)), "--max-concurrency", str(concurrency),
        "--seed", str(run), "--percentile-metrics", "ttft,tpot,itl,e2el",
        "--metric-percentiles", "50,90,99", "--save-result", "--result-dir", RESULT_DIR,
        "--result-filename", f"old-c{concurrency}-r{run}.json",
    ])  # fmt: skip


async def old_ttft_p50(
    pool: SSHPool, host: str, container: str, model: str, levels: tuple[int, ...], runs: int
) -> dict[int, float]:
    """Run the old sweep in `container`; each level's TTFT p50 as the old report gave it."""
    commands = [old_command(model, 8000, c, r) for c in levels for r in range(1, runs + 1)]
    inner = shlex.quote(" && ".join(commands))
    done = await pool.run(host, f"docker exec {container} bash -c {inner}", timeout=120)
    assert done.exit_status == 0, done.stderr
    files = " ".join(f"{RESULT_DIR}/old-c{c}-r{r}.json" for c in levels for r in range(1, runs + 1))
    read = await pool.run(host, f"docker exec {container} cat {files}", timeout=30)
    by_level: dict[int, list[float]] = {}
    for result in parse_results(read.stdout):
        by_level.setdefault(int(result["max_concurrency"]), []).append(result["p50_ttft_ms"])
    return {c: statistics.median(values) for c, values in by_level.items()}
