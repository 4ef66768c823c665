"""A command line inside the wall: the helper named by its hash on the host, sent once.

As the jobs' status program is (tools/jobs/status_script.py), the helper's files are left on
the host in a folder carrying their hash, `~/.scout/wall-HASH/` (or in `$SCOUT_WALL_DIR` where
the host's environment sets it), so a changed helper is a new folder and a call only names it:
one round trip. The call imports the helper from there, so the host's python keeps their
bytecode beside them (`__pycache__`) and no call compiles them again. Where the folder is
missing the line prints MISSING_MARK and exits before anything ran, and the caller sends the
same line once more with the files inline (`install=True`), which writes them (atomically: a
temporary folder, then `mv -T`) and runs the call.

A read that needs root comes as `sudo -n COMMAND`: the wall then goes on after sudo (`sudo -n
python3 HELPER run …`), so the helper starts as root and keeps only the capabilities that
read. A `sudo` anywhere else in the line meets no_new_privs and fails: fail closed.

Most walled calls do not start the helper at all: the pool keeps one fork-server of it per
connection (`server_line`; tools/ssh/wall_server.py) and each call is a fork of it. This line
is for calls through sudo and for a connection where the server cannot start.

The helper keeps the time limit itself (`limit=` in its spec: at the limit it kills the
command, its PID namespace with it, and exits 124 as GNU timeout does): no `timeout` program
starts in between.
"""

from __future__ import annotations

import hashlib
import re
import shlex
from dataclasses import dataclass
from pathlib import Path

HELPER_FILES = (
    "host_helper.py", "host_landlock.py", "host_seccomp.py", "host_netfilter.py", "host_server.py",
    "host_docker_proxy.py", "host_docker_filter.py", "host_dbus_proxy.py", "host_dbus_filter.py",
    "host_job_reader.py", "host_proxy_process.py",
)  # fmt: skip
HELPER_SOURCES = {name: Path(__file__).with_name(name).read_text() for name in HELPER_FILES}
HELPER_HASH = hashlib.sha256(
    "".join(name + "\0" + text for name, text in HELPER_SOURCES.items()).encode()
).hexdigest()[:12]
HELPER_DIR = "${SCOUT_WALL_DIR:-$HOME/.scout}"
HELPER_PATH = f"{HELPER_DIR}/wall-{HELPER_HASH}"  # a shell word inside double quotes
MISSING_MARK = "@@scout-wall missing"
# What the helper prints and exits with when a part of the wall cannot be built (host_helper.py
# says the same: the two cannot share a module, since the helper runs alone on the host, and
# importing it here would load ctypes into every Scout process; tests/unit/test_wall_marks.py
# holds them equal).
UNWALLED_STATUS = 199
UNWALLED_MARK = "@@scout-wall unwalled"
_SUDO = re.compile(r"\A\s*sudo\s+-n\s+(?=[^\s-])")
# sh -c _INSTALL scout-wall FOLDER NAME TEXT NAME TEXT ...: a concurrent install that won the
# rename leaves the same files, so losing it is success.
_INSTALL = (
    'd=$1; t="$d.$$"; shift; mkdir -p "$t" || exit 1; '
    'while [ $# -gt 1 ]; do printf "%s" "$2" > "$t/$1" || exit 1; shift 2; done; '
    'mv -T "$t" "$d" 2>/dev/null || rm -rf "$t"; [ -r "$d/host_helper.py" ]'
)
_LAUNCH = (
    "import sys; sys.path.insert(0, sys.argv[1]); import host_helper; "
    "host_helper.end(host_helper.main(sys.argv[2:]))"
)


@dataclass(frozen=True)
class WallSpec:
    """What a walled call may do beyond reading: connect to these TCP ports on loopback or
    these addresses, write a scratch folder of its own (TMPDIR, removed when it ends), and
    with `docker` read the docker daemon through a read-only proxy (host_docker_proxy.py),
    with `dbus` the system bus through one (host_dbus_proxy.py)."""

    ports: tuple[int, ...] = ()
    scratch: bool = False
    addresses: tuple[str, ...] = ()
    # Build the wall as a kernel of this Landlock ABI would (the lower of it and the host's):
    # how tests show an older kernel's wall on this one. Scout itself never lowers it.
    max_abi: int | None = None
    docker: bool = False
    dbus: bool = False

    def encoded(self) -> str:
        ports = ",".join(str(port) for port in self.ports)
        addresses = ",".join(self.addresses)
        spec = f"ports={ports} addrs={addresses} scratch={int(self.scratch)}"
        spec += " docker=1" if self.docker else ""
        spec += " dbus=1" if self.dbus else ""
        return spec + (f" abi={self.max_abi}" if self.max_abi is not None else "")


def split_sudo(command: str) -> tuple[bool, str]:
    """(True, the rest) for `sudo -n REST`; (False, command) otherwise."""
    match = _SUDO.match(command)
    return (True, command[match.end() :]) if match else (False, command)


def walled_line(script: str, spec: WallSpec, *, timeout: float, sudo: bool, install: bool) -> str:
    """The host command line that runs `sh -c script` inside the wall, killed after `timeout`
    seconds."""
    run = [
        *(["sudo", "-n"] if sudo else []),
        f'python3 -I -S -c {shlex.quote(_LAUNCH)} "$H" run',
        shlex.quote(spec_text(spec, timeout)),
        "-- sh -c",
        shlex.quote(script),
    ]
    return _helper_head(install) + " ".join(run)


def server_line(*, install: bool) -> str:
    """The host command line that starts the wall's fork-server (host_server.py) on a channel
    of its own: every walled call on the connection is then a fork of it."""
    return _helper_head(install) + f'exec python3 -I -S -c {shlex.quote(_LAUNCH)} "$H" serve'


def helper_line(words: str) -> str:
    """The command line that runs the helper with `words` (shell words, expanded by the line's
    shell): for a walled call whose command is the helper itself (host_job_reader.py)."""
    return f'H="{HELPER_PATH}"; exec python3 -I -S -c {shlex.quote(_LAUNCH)} "$H" {words}'


def spec_text(spec: WallSpec, timeout: float) -> str:
    """The helper's SPEC word: the wall's parts and the call's time limit."""
    return f"{spec.encoded()} limit={timeout:g}"


def _helper_head(install: bool) -> str:
    """Shell that names the helper's folder as $H, installs it (`install`) or stops with
    MISSING_MARK where it is missing, and stops where there is no python3."""
    head = f'H="{HELPER_PATH}"; '
    if install:
        files = " ".join(f"{name} {shlex.quote(text)}" for name, text in HELPER_SOURCES.items())
        head += f'sh -c {shlex.quote(_INSTALL)} scout-wall "$H" {files}'
        head += f' || {{ echo "{UNWALLED_MARK} cannot write the wall helper to $H"; '
        head += f"exit {UNWALLED_STATUS}; }}; "
    else:
        missing = f'{{ echo "{MISSING_MARK}"; exit {UNWALLED_STATUS}; }}'
        head += f'[ -r "$H/host_helper.py" ] || {missing}; '
    return head + (
        "command -v python3 >/dev/null 2>&1 || "
        f'{{ echo "{UNWALLED_MARK} no python3 on PATH"; exit {UNWALLED_STATUS}; }}; '
    )


def helper_missing(exit_status: int | None, stdout: str) -> bool:
    return exit_status == UNWALLED_STATUS and stdout.startswith(MISSING_MARK)


def unwalled_reason(exit_status: int | None, stdout: str) -> str | None:
    """Why the wall could not be built (the command did not run), or None."""
    if exit_status != UNWALLED_STATUS or not stdout.startswith(UNWALLED_MARK):
        return None
    said = stdout[len(UNWALLED_MARK) :].strip().splitlines()
    return said[0] if said else "unknown"
