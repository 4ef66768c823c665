"""`scout read FILE|-`: what a pasted output says, read by the format it is in (tools/formats)."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from tools.formats import Reading, Unread

EXIT_OK, EXIT_UNREAD, EXIT_USAGE = 0, 1, 2


def add_read_command(sub: argparse._SubParsersAction) -> None:
    read = sub.add_parser(
        "read",
        help="identify a pasted command output and print the facts and findings it supports",
        description="Read an output a person pastes or attaches (nvidia-smi in any form, ibstat, "
        "ibv_devinfo, ip, docker, df, a job's log, …): name its format, print what it "
        "establishes and what that means for a deployment. Exit status 1 if no reader knows it.",
    )
    read.add_argument("file", help="the file holding the output, or - for standard input")
    read.set_defaults(func=_cmd_read)


def _cmd_read(args: argparse.Namespace) -> int:
    from tools.formats import Unread, read_pasted

    try:
        text = sys.stdin.read() if args.file == "-" else Path(args.file).read_text(errors="replace")
    except OSError as exc:
        print(f"scout read: cannot read {args.file}: {exc.strerror}", file=sys.stderr)
        return EXIT_USAGE
    reading = read_pasted(text)
    print("\n".join(describe(reading)))
    return EXIT_UNREAD if isinstance(reading, Unread) else EXIT_OK


def describe(reading: Reading | Unread) -> list[str]:
    """A reading as the lines a person reads: the format, its facts, its findings."""
    from tools.formats import Unread

    if isinstance(reading, Unread):
        return [
            "no reader for this" + (f" (closest: {reading.closest})" if reading.closest else "")
        ]
    lines = [f"format: {reading.format}"]
    lines += [
        f"  {key}: {value}" for key, value in reading.facts.items() if value not in (None, "")
    ]
    lines.append("findings:" if reading.findings else "findings: none")
    lines += [f"  - {finding}" for finding in reading.findings]
    return lines
