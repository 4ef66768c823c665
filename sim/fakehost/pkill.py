"""`pkill` that can only reach this simulated host's own processes.

Scout cleans up a cancelled command with `pkill -TERM -f '[s]cout-run-…'`. Here the pattern is
matched against the command lines of processes whose environment names this host, so nothing
else on the machine can be signalled.
"""

from __future__ import annotations

import re
import signal
import sys
from pathlib import Path
from typing import Any

from . import procs


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


def run_pkill(args: list[str], state: dict[str, Any], host_dir: Path) -> int:
    sig, rest = _signal_of(args)
    full = "-f" in rest or "--full" in rest
    patterns = [a for a in rest if not a.startswith("-")]
    if not patterns:
        sys.stderr.write(
            "pkill: no matching criteria specified\nTry `pkill --help' for more information.\n"
        )
        return 2
    try:
        regex = re.compile(patterns[0])
    except re.error as exc:
        sys.stderr.write(f"pkill: invalid pattern {patterns[0]!r}: {exc}\n")
        return 2
    matched = []
    own = procs.own_pids()
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit() or int(entry.name) in own:
            continue
        try:
            raw = (entry / ("cmdline" if full else "comm")).read_bytes()
        except OSError:
            continue
        text = raw.replace(b"\0", b" ").decode(errors="replace").strip()
        if regex.search(text) and procs.belongs_to(int(entry.name), host_dir):
            matched.append(int(entry.name))
    return 0 if procs.signal_ours(matched, host_dir, sig) else 1
