"""Classifier benchmark: the time to judge one shell command, over the whole labelled corpus.

Classifies every command of tests/unit/data/policy_corpus.tsv several times and reports the
median time per command, and the same for the recon probe pack (the one command every recon
round sends); it also prints the read-only recall on the everyday GPU-host reads of
tests/unit/data/everyday_reads.txt (goal: at least 0.90, so the gate stays usable). Last line:
`classify: X.XXX ms per command` (goal: well under 1 ms, so the classifier never shows in a
recon round).
"""

from __future__ import annotations

import argparse
import statistics
import time
from pathlib import Path

from agent.safety.shell import classify_command
from tools.recon.probe import build_probe_script

DATA = Path(__file__).parents[1] / "tests" / "unit" / "data"
CORPUS = DATA / "policy_corpus.tsv"
EVERYDAY_READS = DATA / "everyday_reads.txt"


def corpus_commands() -> list[str]:
    commands = []
    for line in CORPUS.read_text(encoding="utf-8").splitlines():
        if line.strip() and not line.startswith("#"):
            commands.append(line.partition("\t")[2].replace("⏎", "\n"))
    return commands


def read_only_recall() -> tuple[int, int]:
    lines = EVERYDAY_READS.read_text(encoding="utf-8").splitlines()
    reads = [line for line in lines if line.strip() and not line.startswith("#")]
    kept = sum(classify_command(read).label == "read_only" for read in reads)
    return kept, len(reads)


def per_command_ms(commands: list[str], reps: int) -> float:
    rounds = []
    for _ in range(reps):
        started = time.perf_counter()
        for command in commands:
            classify_command(command)
        rounds.append((time.perf_counter() - started) / len(commands))
    return statistics.median(rounds) * 1000


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--reps", type=int, default=5)
    args = parser.parse_args()
    commands = corpus_commands()
    per_command_ms(commands[:50], 1)  # warm up imports and caches
    probe = per_command_ms([build_probe_script()], args.reps * 20)
    print(f"corpus: {len(commands)} commands")
    print(f"probe pack (one script): {probe:.3f} ms")
    kept, total = read_only_recall()
    print(f"read-only recall on everyday reads: {kept / total:.3f} ({kept}/{total}, goal ≥ 0.90)")
    print(f"classify: {per_command_ms(commands, args.reps):.3f} ms per command")


if __name__ == "__main__":
    main()
