"""The engine's own benchmark as Scout asks it: one `vllm bench serve` per run, fitted to the
engine it measures."""

from __future__ import annotations

import shlex

import pytest

from tools.deploy.proof.engine_bench import Sweep, bench_command, sweep_commands
from tools.deploy.proof.fingerprint import Served
from tools.deploy.proof.phases import fitted

MODEL = "Qwen/Qwen3.5-122B-A10B-FP8"


def options(command: str) -> dict[str, list[str]]:
    words, found, key = shlex.split(command), {}, ""
    for word in words[3:]:
        if word.startswith("--"):
            key = word
            found[key] = []
        else:
            found[key].append(word)
    return found


def test_one_run_saves_its_result_with_the_asked_percentiles_and_goodput() -> None:
    command = bench_command(Sweep(), MODEL, 8000, 4, 2)
    assert command.startswith("vllm bench serve ")
    said = options(command)
    assert said["--save-result"] == [] and said["--result-filename"] == ["c4-r2.json"]
    assert said["--dataset-name"] == ["random"] and said["--max-concurrency"] == ["4"]
    assert said["--num-prompts"] == ["35"]  # 100 measured over 3 runs, and the warm-ups' prompt
    assert said["--seed"] == ["5"] and said["--num-warmups"] == ["4"]  # a round at c=4
    assert said["--ignore-eos"] == [] and said["--save-detailed"] == []
    assert said["--metric-percentiles"] == ["50,90,99"]
    assert said["--goodput"] == ["ttft:2000", "tpot:100"]
    assert "--tokenizer" not in said


def test_the_sweep_is_every_concurrency_times_every_run() -> None:
    commands = sweep_commands(Sweep(concurrency=(1, 4, 16), runs=3), MODEL, 8000)
    assert [options(c)["--result-filename"][0] for c in commands] == [
        f"c{c}-r{r}.json" for c in (1, 4, 16) for r in (1, 2, 3)
    ]


@pytest.mark.parametrize("mode", ["quick", "full"])
def test_no_two_runs_share_a_seed_and_the_first_warms_the_engine_up(mode: str) -> None:
    first = Sweep(concurrency=(1, 4, 16), runs=3, mode=mode, seed_base=1000)
    again = Sweep(concurrency=(1, 4, 16), runs=3, mode=mode, seed_base=2000)
    seeds = [options(c)["--seed"][0] for s in (first, again) for c in sweep_commands(s, MODEL, 1)]
    assert len(set(seeds)) == len(seeds) == 18
    warmups = [int(options(c)["--num-warmups"][0]) for c in sweep_commands(first, MODEL, 1)]
    assert warmups[0] >= 16 and warmups[1:] == [1, 1, 4, 4, 4, 16, 16, 16]
    measured = (int(options(bench_command(first, MODEL, 1, 4, 2))["--num-prompts"][0]) - 1) * 3
    assert measured >= {"quick": 100, "full": 1000}[mode]


def test_the_sweep_fits_the_engine_it_measures() -> None:
    serve = Served(f"docker exec e vllm serve {MODEL} --served-model-name qwen --port 8000",
                   "e", ["spark-a"])  # fmt: skip
    sweep = fitted(Sweep(input_len=1024, output_len=128), 1000, serve)
    assert sweep.input_len == 1000 - 128 - 16  # prompts that fit --max-model-len
    assert options(bench_command(sweep, "qwen", 8000, 1, 1))["--tokenizer"] == [MODEL]
    assert fitted(Sweep(), 65536, None) == Sweep()  # nothing known: as asked
