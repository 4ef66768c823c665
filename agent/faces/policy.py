"""`scout policy classify 'CMD'`: print how risky a command is and why."""

from __future__ import annotations

import sys
from typing import TextIO

from agent.safety.shell.classifier import classify_command

EXIT_OK = 0
EXIT_USAGE = 2
DISPLAY_LIMIT = 160


def classify_main(argv: list[str], out: TextIO | None = None) -> int:
    """Classify the command given as one argument (several words are joined with spaces)."""
    stream = out or sys.stdout
    command = " ".join(argv).strip()
    if not command:
        print(
            "scout policy classify: give the command as one quoted argument, e.g.", file=sys.stderr
        )
        print("  scout policy classify 'docker rm -f vllm_node'", file=sys.stderr)
        return EXIT_USAGE
    verdict = classify_command(command)
    reasons = verdict.reasons or ["no reason recorded"]
    print(f"{verdict.label}: {_display(command)} — {reasons[0]}", file=stream)
    for reason in reasons[1:]:
        print(f"  also: {reason}", file=stream)
    return EXIT_OK


def _display(command: str) -> str:
    first_line, _, rest = command.partition("\n")
    shown = first_line[:DISPLAY_LIMIT]
    return shown + (" …" if rest or len(first_line) > DISPLAY_LIMIT else "")
