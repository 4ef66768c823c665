"""`pkill` that can only reach this simulated host's own processes.

Scout stops a cancelled command by its session (`pkill -KILL -s SID,...`; see
tools/ssh/remote_command.py) and engines by their command line (`pkill -TERM -f PATTERN`). Both
are matched as procps pkill(1) matches them, against processes whose environment names this
host, so nothing else on the machine can be signalled.
"""

from __future__ import annotations

import re
import signal
import sys
from pathlib import Path
from typing import Any

from . import procs

_VALUE_OPTIONS = ("-s", "--session")


def _signal_of(args: list[str]) -> tuple[int, list[str]]:
    sig, rest = signal.SIGTERM, []
    for i, arg in enumerate(args):
        name = arg.removeprefix("--signal=") if arg.startswith("--signal=") else None
        if name is None and re.fullmatch(r"-[A-Z0-9]+", arg) and arg != "-f":
            name = arg[1:]
        if name is None and i > 0 and args[i - 1] == "--signal":
            name = arg
        if name is not None:
            sig = int(name) if name.isdigit() else signal.Signals["SIG" + name.removeprefix("SIG")]
        elif arg != "--signal":
            rest.append(arg)
    return sig, rest


def _sessions_and_patterns(rest: list[str]) -> tuple[set[int] | None, list[str]]:
    """`-s 12,34` (procps: a comma-separated list of session ids) and the other operands."""
    sessions: set[int] | None = None
    patterns, skip = [], False
    for i, arg in enumerate(rest):
        if skip:
            skip = False
        elif arg in _VALUE_OPTIONS:
            skip = True
            value = rest[i + 1] if i + 1 < len(rest) else ""
            sessions = {int(s) for s in value.split(",") if s.strip().isdigit()}
        elif not arg.startswith("-"):
            patterns.append(arg)
    return sessions, patterns


def _session_of(pid: int) -> int:
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return -1
    return int(stat[stat.rindex(")") + 2 :].split()[3])


def run_pkill(args: list[str], state: dict[str, Any], host_dir: Path) -> int:
    sig, rest = _signal_of(args)
    full = "-f" in rest or "--full" in rest
    sessions, patterns = _sessions_and_patterns(rest)
    if not patterns and sessions is None:
        sys.stderr.write(
            "pkill: no matching criteria specified\nTry `pkill --help' for more information.\n"
        )
        return 2
    try:
        regex = re.compile(patterns[0] if patterns else "")
    except re.error as exc:
        sys.stderr.write(f"pkill: invalid pattern {patterns[0]!r}: {exc}\n")
        return 2
    matched = []
    own = procs.own_pids()
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit() or int(entry.name) in own:
            continue
        if sessions is not None and _session_of(int(entry.name)) not in sessions:
            continue
        try:
            raw = (entry / ("cmdline" if full else "comm")).read_bytes()
        except OSError:
            continue
        text = raw.replace(b"\0", b" ").decode(errors="replace").strip()
        if regex.search(text) and procs.belongs_to(int(entry.name), host_dir):
            matched.append(int(entry.name))
    return 0 if procs.signal_ours(matched, host_dir, sig) else 1
