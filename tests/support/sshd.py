"""What the real-sshd test hosts share: running root commands, host keys, the sshd_config and
the wait until an sshd accepts connections.

tests/support/sshd_topology.py (head and worker in network namespaces), tests/support/sshd_fleet.py,
tests/support/dockerd.py (a private dockerd behind sshd on loopback), tests/support/bus_host.py
and tests/system/test_scarce_sessions.py start OpenSSH's sshd this way (bench/ssh_fanout.py's
farm, which may not import tests/, writes the same SetEnv line itself).

Each of those test hosts writes its config through `write_sshd_config`, whose one `SetEnv` line
points the sessions' Scout host state (the wall helper, durable jobs) into the test's own
folder: these hosts log in as root on this machine, and without it Scout would write into
root's real ~/.scout (tests/system/conftest.py fails a session that does).
"""

from __future__ import annotations

import re
import subprocess
import time
from collections.abc import Mapping, Sequence
from pathlib import Path

SSHD = Path("/usr/sbin/sshd")
# Only bounds a hang: a loaded two-core CI machine can take many seconds to start a daemon, and
# a wait it trips fails a test that had nothing wrong.
START_WAIT_S = 120.0
# Where Scout keeps its state on a host (tools/wall/command.py, tools/jobs/folder.py), and the
# folder under a test host's `host_state` each goes to; the caller's `env` may not set them.
HOST_STATE = {"SCOUT_WALL_DIR": "wall", "SCOUT_JOBS_DIR": "jobs"}
_ENV_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_UNSAFE_VALUE = re.compile(r"[\s\"'\\#]")
_SETENV = re.compile(r"\s*setenv[\s=]", re.IGNORECASE)  # sshd's keywords ignore case, take `=`


class CommandFailed(RuntimeError):
    """A setup command exited non-zero; the message carries its stderr."""


def run(
    args: list[str], *, check: bool = True, timeout: float = 60
) -> subprocess.CompletedProcess[str]:
    done = subprocess.run(args, capture_output=True, text=True, timeout=timeout)
    if check and done.returncode != 0:
        raise CommandFailed(f"{' '.join(args)} failed ({done.returncode}): {done.stderr.strip()}")
    return done


def new_key(path: Path) -> str:
    """Make an ed25519 key pair at `path`; the public key as `type base64` (known_hosts form)."""
    run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", str(path)])
    return " ".join(path.with_suffix(".pub").read_text().split()[:2])


def _session_env_line(host_state: Path, env: Mapping[str, str]) -> str:
    """The one `SetEnv` line of a test host: SHLVL=1, the caller's `env`, and Scout's host
    state under `host_state` (`wall/`, `jobs/`).

    One line because sshd keeps only the first `SetEnv` it reads and ignores the rest, so a
    second line would silently drop its variables. Unquotable values are refused rather than
    quoted: a test's paths and addresses never need it.
    """
    state = {name: str(host_state / folder) for name, folder in HOST_STATE.items()}
    if clash := sorted(set(env) & set(state)):
        raise ValueError(f"{clash[0]} is set from host_state ({host_state}), not from env")
    merged = {"SHLVL": "1", **env, **state}
    for name, value in merged.items():
        if not _ENV_NAME.fullmatch(name) or _UNSAFE_VALUE.search(value):
            raise ValueError(f"cannot put {name}={value!r} on an sshd SetEnv line unquoted")
    return "SetEnv " + " ".join(f"{name}={value}" for name, value in merged.items())


def write_sshd_config(
    path: Path,
    *,
    listen: str,
    port: int,
    host_key: Path,
    pid_file: Path,
    authorized_keys: Path,
    host_state: Path,
    env: Mapping[str, str] | None = None,
    extra: Sequence[str] = (),
) -> Path:
    """Key-only logins, no PAM, no strict modes on the test folders, the sessions' environment
    from `_session_env_line(host_state, env)`; `extra` lines after those.

    `extra` may not hold a `SetEnv` of its own (sshd would ignore it, see _session_env_line).
    The file is checked with `sshd -t` before it is returned.
    """
    setenv = [line for line in extra if _SETENV.match(line)]
    if setenv:
        raise ValueError(f"pass the environment as env=, not as a SetEnv line: {setenv[0]!r}")
    lines = [
        f"ListenAddress {listen}",
        f"Port {port}",
        f"HostKey {host_key}",
        f"PidFile {pid_file}",
        f"AuthorizedKeysFile {authorized_keys}",
        "PubkeyAuthentication yes",
        "PasswordAuthentication no",
        "KbdInteractiveAuthentication no",
        "PermitRootLogin prohibit-password",
        "UsePAM no",
        "StrictModes no",
        _session_env_line(host_state, env or {}),
        *extra,
        "",
    ]
    path.write_text("\n".join(lines))
    run([str(SSHD), "-t", "-f", str(path)])
    return path


class SshdDidNotStart(RuntimeError):
    """sshd exited, or wrote no pid file within START_WAIT_S; the message carries its log."""


def wait_until_listening(
    pid_file: Path, log: Path, process: subprocess.Popen[bytes] | None = None
) -> None:
    """Return once sshd has written `pid_file`: it does so only after it listens on every
    address (sshd.c: server_listen() comes before the pid file), so a connection made from
    then on is accepted. Raises SshdDidNotStart at once when `process` (an `sshd -D`) exits."""
    deadline = time.monotonic() + START_WAIT_S
    while not pid_file.exists():
        exited = process is not None and process.poll() is not None
        if exited or time.monotonic() > deadline:
            said = log.read_text(errors="replace").strip() if log.exists() else ""
            why = "exited" if exited else f"wrote no pid file within {START_WAIT_S:g} s"
            raise SshdDidNotStart(f"sshd {why}; its log ({log}): {said or 'empty'}")
        time.sleep(0.02)
