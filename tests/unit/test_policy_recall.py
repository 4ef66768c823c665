"""The gate stays usable, and the interfaces say what the classifier says (issue 25).

`scout policy classify --file` is run on the everyday reads of GPU hosts (read-only recall must
stay at 90 % or more; the ratio is printed) and on every generated state-changing form (none may
come back read_only); `scout policy check` shows that an allow rule never lets an unknown option
turn a destructive call into one the rule runs.
"""

from __future__ import annotations

import json
from pathlib import Path

from agent.faces.cli import main
from tests.unit import policy_forms_programs as programs
from tests.unit.test_policy_classes import STATE_CHANGING

EVERYDAY_READS = Path(__file__).parent / "data" / "everyday_reads.txt"
RECALL_FLOOR = 0.90


def _classify_file(tmp_path, capsys, commands: list[str]) -> list[tuple[str, str]]:
    listing = tmp_path / "commands.txt"
    listing.write_text("\n".join(commands) + "\n", encoding="utf-8")
    assert main(["policy", "classify", "--file", str(listing)]) == 0
    rows = [line.split("\t", 1) for line in capsys.readouterr().out.splitlines()]
    return [(label, command) for label, command in rows]


def everyday_reads() -> list[str]:
    lines = EVERYDAY_READS.read_text(encoding="utf-8").splitlines()
    return [line for line in lines if line.strip() and not line.startswith("#")]


def test_read_only_recall_on_everyday_gpu_host_reads(tmp_path, capsys):
    reads = everyday_reads()
    rows = _classify_file(tmp_path, capsys, reads)
    assert len(rows) == len(reads) >= 150
    missed = [command for label, command in rows if label != "read_only"]
    recall = 1 - len(missed) / len(rows)
    print(f"read-only recall: {recall:.3f} ({len(rows) - len(missed)}/{len(rows)})")
    assert recall >= RECALL_FLOOR, f"recall {recall:.3f}; asked for: {missed}"


def test_no_generated_state_changing_form_comes_back_read_only(tmp_path, capsys):
    forms = [f for generate in STATE_CHANGING.values() for f in generate() if "\n" not in f]
    rows = _classify_file(tmp_path, capsys, forms)
    assert len(rows) == len(forms)
    read_only = [command for label, command in rows if label == "read_only"]
    assert not read_only, f"{len(read_only)} read_only:\n" + "\n".join(read_only[:40])


def _check(capsys, command: str, *flags: str) -> str:
    call = {"tool": "ssh_exec", "input": {"host": "spark-a", "command": command}}
    assert main(["policy", "check", "--call", json.dumps(call), *flags]) == 0
    return capsys.readouterr().out


def test_an_allow_rule_and_an_unknown_option_never_make_a_destructive_call_run(capsys):
    for command, _option in programs.unknown_option_forms():
        pattern = " ".join(command.split()[:2]) + " *"
        rule = ["--allow", f'ssh_exec(command="{pattern}")', "--mode", "auto-safe"]
        line = _check(capsys, command, *rule)
        assert line.startswith("destructive ask — "), line
