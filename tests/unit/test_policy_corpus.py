"""The labelled corpus: real ops commands and tricky ones, judged by the classifier.

Every mismatch is reported at once, with the command, so a failing run shows the whole picture.
Read-only recall is checked on what Scout itself runs: the recon probe pack (whole, and each
section) and every command the recorded sessions in `transcripts/` ran as read-only.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from agent.safety.shell import classify_command
from agent.safety.shell.command_rules import known_programs
from tools.recon.probe import build_probe_script
from tools.recon.sections import SECTIONS
from tools.risk.assessment import Risk

CORPUS = Path(__file__).parent / "data" / "policy_corpus.tsv"
TRANSCRIPTS = Path(__file__).parents[2] / "transcripts"
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
    assert len(corpus) >= 1500
    assert labels == {Risk.READ_ONLY, Risk.MUTATING, Risk.DESTRUCTIVE}
    commands = [command for _, command in corpus]
    assert len(commands) == len(set(commands)), "a command is labelled twice"


def test_every_program_the_classifier_knows_is_in_the_corpus(corpus):
    missing = []
    for program in known_programs():
        word = re.compile(rf"(^|[\s;|&(`/]){re.escape(program)}($|[\s;|&)])")
        if not any(word.search(command) for _, command in corpus):
            missing.append(program)
    assert not missing, f"no corpus line uses: {' '.join(missing)}"


def recorded_read_only_commands() -> list[str]:
    found: list[str] = []
    for path in sorted(TRANSCRIPTS.glob("*.jsonl")):
        for line in path.read_text(encoding="utf-8").splitlines():
            event = json.loads(line)
            call = (event.get("type"), event.get("name"), event.get("risk"))
            if call == ("tool_call", "ssh_exec", "read_only"):
                found.append(event["input"]["command"])
    return found


@pytest.mark.parametrize(
    "command",
    [build_probe_script(), *(command for _, command in SECTIONS), *recorded_read_only_commands()],
)
def test_what_scout_runs_as_read_only_stays_read_only(command):
    verdict = classify_command(command)
    assert verdict.risk == Risk.READ_ONLY, verdict.reasons


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
