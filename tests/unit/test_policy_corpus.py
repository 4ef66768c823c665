"""The labelled corpus: real ops commands and tricky ones, judged by the classifier.

Every mismatch is reported at once, with the command, so a failing run shows the whole picture.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from agent.safety.shell import classify_command
from tools.base import Risk

CORPUS = Path(__file__).parent / "data" / "policy_corpus.tsv"
NEWLINE_MARK = "⏎"


def load_corpus() -> list[tuple[Risk, str]]:
    rows: list[tuple[Risk, str]] = []
    for number, line in enumerate(CORPUS.read_text(encoding="utf-8").splitlines(), start=1):
        if not line.strip() or line.startswith("#"):
            continue
        label, sep, command = line.partition("\t")
        if not sep:
            raise ValueError(f"{CORPUS.name}:{number}: expected 'label<TAB>command'")
        rows.append((Risk.from_label(label), command.replace(NEWLINE_MARK, "\n")))
    return rows


def _mismatches(rows: list[tuple[Risk, str]], wrong) -> list[str]:
    found = []
    for expected, command in rows:
        verdict = classify_command(command)
        if wrong(expected, verdict.risk):
            found.append(
                f"  expected {expected.label}, got {verdict.label}: {command!r}\n"
                f"      reasons: {'; '.join(verdict.reasons)}"
            )
    return found


@pytest.fixture(scope="module")
def corpus() -> list[tuple[Risk, str]]:
    return load_corpus()


def test_corpus_is_large_and_covers_every_label(corpus):
    labels = {risk for risk, _ in corpus}
    assert len(corpus) >= 300
    assert labels == {Risk.READ_ONLY, Risk.MUTATING, Risk.DESTRUCTIVE}


def test_nothing_risky_is_called_read_only_and_destructive_stays_destructive(corpus):
    def unsafe(expected: Risk, got: Risk) -> bool:
        if expected == Risk.DESTRUCTIVE:
            return got != Risk.DESTRUCTIVE
        return expected == Risk.MUTATING and got == Risk.READ_ONLY

    problems = _mismatches(corpus, unsafe)
    assert not problems, f"{len(problems)} unsafe classifications:\n" + "\n".join(problems)


def test_every_command_gets_its_label(corpus):
    problems = _mismatches(corpus, lambda expected, got: expected != got)
    assert not problems, f"{len(problems)} mismatches:\n" + "\n".join(problems)
