"""`kill` for walled-in scripts: signals only this simulated host's own processes.

The shell's own `kill` builtin is disabled in the sandbox (sandbox/rc.bash): inside the wall it
could not reach another command's processes (a job started by an earlier command), outside it
any process of the machine's user. This one runs in the tool server, in the host's domain; it
takes what scripts give the builtin (`kill PID`, `kill -TERM -- -PGID` for a whole process
group, `kill -0 PID` to test, `-s NAME`, `-9`, `-l`) and refuses every process that does not run
inside this host, as if it did not exist.
"""

from __future__ import annotations

import contextlib
import os
import re
import signal
import sys
from pathlib import Path
from typing import Any

from . import procs


class KillUsage(Exception):
    """Arguments `kill` cannot use; the message is what it prints."""


def _signal_number(name: str) -> int:
    if name.isdigit():
        return int(name)
    try:
        return int(signal.Signals["SIG" + name.upper().removeprefix("SIG")])
    except KeyError:
        raise KillUsage(f"kill: invalid signal specification: {name}") from None


def _parse(args: list[str]) -> tuple[int, list[int]]:
    sig, targets, i, given = signal.SIGTERM, [], 0, False
    while i < len(args):
        arg = args[i]
        if arg == "--":
            targets += args[i + 1 :]
            break
        if arg in ("-s", "-n"):
            if i + 1 >= len(args):
                raise KillUsage(f"kill: option requires an argument -- '{arg[1]}'")
            sig, i, given = _signal_number(args[i + 1]), i + 2, True
            continue
        if re.fullmatch(r"-[A-Za-z0-9]+", arg) and not targets and not given:
            sig, given = _signal_number(arg[1:]), True
        else:
            targets.append(arg)
        i += 1
    if not targets:
        raise KillUsage("kill: usage: kill [-s sigspec | -n signum | -sigspec] pid ...")
    try:
        return int(sig), [int(t) for t in targets]
    except ValueError:
        raise KillUsage("kill: arguments must be process or job IDs") from None


def _group(pgid: int, host_dir: Path) -> list[int]:
    members = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        with contextlib.suppress(OSError, ValueError):
            fields = (entry / "stat").read_text().rpartition(")")[2].split()
            if int(fields[2]) == pgid:
                members.append(int(entry.name))
    return [pid for pid in members if procs.belongs_to(pid, host_dir)]


def _send(target: int, sig: int, host_dir: Path) -> str | None:
    """Signal one target (a pid, or -pgid); an error message, or None when it worked."""
    pids = _group(-target, host_dir) if target < 0 else [target]
    pids = [pid for pid in pids if pid > 0 and procs.belongs_to(pid, host_dir)]
    if not pids:
        return f"kill: ({target}) - No such process"
    for pid in pids:
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, sig)
    return None


def run_kill(args: list[str], state: dict[str, Any], host_dir: Path) -> int:
    if args[:1] in (["-l"], ["-L"]):
        print(" ".join(s.name.removeprefix("SIG") for s in signal.Signals if s.value < 32))
        return 0
    try:
        sig, targets = _parse(args)
    except KillUsage as exc:
        sys.stderr.write(f"{exc}\n")
        return 2
    code = 0
    for target in targets:
        error = _send(target, sig, host_dir)
        if error:
            sys.stderr.write(error + "\n")
            code = 1
    return code
