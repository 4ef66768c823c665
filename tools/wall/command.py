"""A command line inside the wall: the helper named by its hash on the host, sent once.

As the jobs' status program is (tools/jobs/status_script.py), the helper is left on the host
under a name carrying its hash, `~/.scout/wall-HASH.py` (or in `$SCOUT_WALL_DIR` where the
host's environment sets it), so a changed helper is a new file and
a call only names it: one round trip. Where the file is missing the line prints MISSING_MARK and
exits before anything ran, and the caller sends the same line once more with the helper inline
(`install=True`), which writes it (atomically: a temporary name, then `mv`) and runs the call.

A read that needs root comes as `sudo -n COMMAND`: the wall then goes on after sudo (`sudo -n
timeout … python3 HELPER run …`), so the helper starts as root and keeps only the capabilities
that read. A `sudo` anywhere else in the line meets no_new_privs and fails: fail closed.
"""

from __future__ import annotations

import hashlib
import re
import shlex
from dataclasses import dataclass
from pathlib import Path

from tools.wall.host_helper import UNWALLED_MARK, UNWALLED_STATUS

HELPER_SOURCE = Path(__file__).with_name("host_helper.py").read_text()
HELPER_HASH = hashlib.sha256(HELPER_SOURCE.encode()).hexdigest()[:12]
HELPER_DIR = "${SCOUT_WALL_DIR:-$HOME/.scout}"
HELPER_PATH = f"{HELPER_DIR}/wall-{HELPER_HASH}.py"  # a shell word inside double quotes
MISSING_MARK = "@@scout-wall missing"
_SUDO = re.compile(r"\A\s*sudo\s+-n\s+(?=[^\s-])")
_INSTALL = 'mkdir -p "${2%/*}" && printf "%s" "$1" > "$2.$$" && mv -f "$2.$$" "$2"'


@dataclass(frozen=True)
class WallSpec:
    """What a walled call may do beyond reading: connect to these TCP ports, write a scratch
    folder of its own (TMPDIR, removed when it ends)."""

    ports: tuple[int, ...] = ()
    scratch: bool = False

    def encoded(self) -> str:
        ports = ",".join(str(port) for port in self.ports)
        return f"ports={ports} scratch={int(self.scratch)}"


def split_sudo(command: str) -> tuple[bool, str]:
    """(True, the rest) for `sudo -n REST`; (False, command) otherwise."""
    match = _SUDO.match(command)
    return (True, command[match.end() :]) if match else (False, command)


def walled_line(script: str, spec: WallSpec, *, timeout: str, sudo: bool, install: bool) -> str:
    """The host command line that runs `sh -c script` inside the wall under `timeout`."""
    head = f'H="{HELPER_PATH}"; '
    if install:
        head += f"sh -c {shlex.quote(_INSTALL)} scout-wall {shlex.quote(HELPER_SOURCE)} " + '"$H"'
        head += f' || {{ echo "{UNWALLED_MARK} cannot write the wall helper to $H"; '
        head += f"exit {UNWALLED_STATUS}; }}; "
    else:
        head += f'[ -r "$H" ] || {{ echo "{MISSING_MARK}"; exit {UNWALLED_STATUS}; }}; '
    head += (
        "command -v python3 >/dev/null 2>&1 || "
        f'{{ echo "{UNWALLED_MARK} no python3 on PATH"; exit {UNWALLED_STATUS}; }}; '
    )
    run = [
        *(["sudo", "-n"] if sudo else []),
        timeout,
        'python3 -I -S "$H" run',
        shlex.quote(spec.encoded()),
        "-- sh -c",
        shlex.quote(script),
    ]
    return head + " ".join(run)


def helper_missing(exit_status: int | None, stdout: str) -> bool:
    return exit_status == UNWALLED_STATUS and stdout.startswith(MISSING_MARK)


def unwalled_reason(exit_status: int | None, stdout: str) -> str | None:
    """Why the wall could not be built (the command did not run), or None."""
    if exit_status != UNWALLED_STATUS or not stdout.startswith(UNWALLED_MARK):
        return None
    said = stdout[len(UNWALLED_MARK) :].strip().splitlines()
    return said[0] if said else "unknown"
