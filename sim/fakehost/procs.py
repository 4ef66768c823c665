"""Processes of one simulated host: which are ours, detaching engine work, waiting on a container.

Engine commands started with `docker exec -d` or as a container's main command keep running after
the SSH command returns, like the real thing. They are forked into their own session, recorded in
the container's `pids`, end when their container stops or the simulator is gone, and are only ever
signalled after checking that they belong to this host.
"""

from __future__ import annotations

import contextlib
import os
import signal
import sys
import time
from collections.abc import Callable
from pathlib import Path

from .state import HOST_DIR_ENV, read_state

POLL_S = 0.25
_spared: set[int] = set()


def spare(pid: int) -> None:
    """Never signal `pid`: the client process a tool server runs this command for."""
    _spared.add(pid)


def own_pids() -> set[int]:
    """This command's own processes: itself, its parent and the client it runs for, if any."""
    return {os.getpid(), os.getppid(), *_spared}


def belongs_to(pid: int, host_dir: Path) -> bool:
    """True if process `pid` runs inside this simulated host (its environment names the host).

    Fake tools run in the host's tool server, whose Landlock domain holds every command of the
    host (confinement.py): the environment of a command is readable from there, and of nothing
    the host's wall keeps out.
    """
    try:
        environ = Path(f"/proc/{pid}/environ").read_bytes()
    except OSError:
        return False
    return f"{HOST_DIR_ENV}={host_dir}".encode() in environ.split(b"\0")


def host_processes(host_dir: Path) -> list[int]:
    """Every process running inside this simulated host (jobs, engines, commands)."""
    pids = [int(e.name) for e in Path("/proc").iterdir() if e.name.isdigit()]
    return [pid for pid in pids if pid != os.getpid() and belongs_to(pid, host_dir)]


def _stat_fields(pid: int) -> list[str]:
    """/proc/PID/stat after the command name: state, ppid, pgrp, session, ...; [] if gone."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return []
    return stat[stat.rindex(")") + 2 :].split()


def descendants(ancestor: int) -> list[int]:
    """Every process below `ancestor` (children first), by each process's parent."""
    children: dict[int, list[int]] = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit() and len(fields := _stat_fields(int(entry.name))) > 1:
            children.setdefault(int(fields[1]), []).append(int(entry.name))
    found, queue = [], list(children.get(ancestor, []))
    while queue:
        pid = queue.pop(0)
        found.append(pid)
        queue += children.get(pid, [])
    return found


def signal_ours(pids: list[int], host_dir: Path, sig: int = signal.SIGTERM) -> int:
    """Signal the given processes that belong to this host; return how many were signalled."""
    sent = 0
    for pid in pids:
        if pid not in own_pids() and belongs_to(pid, host_dir):
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.kill(pid, sig)
                sent += 1
    return sent


def session_members(sid: int) -> list[int]:
    """Every process in session `sid`: an SSH command and whatever it started.

    A command's process group is not enough: GNU timeout moves itself into a group of its own
    (coreutils src/timeout.c calls setpgid(0, 0) unless --foreground), so a nested `timeout` and
    its child would outlive a kill of the command's group. They stay in the command's session.
    """
    members = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            fields = _stat_fields(int(entry.name))
            if len(fields) > 3 and int(fields[3]) == sid:
                members.append(int(entry.name))
    return members


def log_path(host_dir: Path, container_id: str) -> Path:
    """Where a container's process output goes (what `docker logs` adds to the scenario logs)."""
    return host_dir / "containers" / f"{container_id}.log"


def simulator_alive(host_dir: Path) -> bool:
    try:
        pid = read_state(host_dir).get("sim_pid", 0)
    except (OSError, ValueError):
        return False
    if not pid:
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def container_running(host_dir: Path, container_id: str) -> bool:
    try:
        containers = read_state(host_dir)["docker"]["containers"].values()
    except (OSError, ValueError):
        return False
    return any(c["id"] == container_id and c["state"] == "running" for c in containers)


def wait_while_running(host_dir: Path, container_id: str, limit_s: float | None = None) -> bool:
    """Block until the container stops, the simulator ends or `limit_s` passes; True on timeout."""
    deadline = None if limit_s is None else time.monotonic() + limit_s
    while container_running(host_dir, container_id) and simulator_alive(host_dir):
        if deadline is not None and time.monotonic() >= deadline:
            return True
        time.sleep(POLL_S if deadline is None else min(POLL_S, deadline - time.monotonic()))
    return False


def detach(
    host_dir: Path,
    container_id: str,
    work: Callable[[], int],
    on_exit: Callable[[int], None],
    logged: bool = True,
) -> int:
    """Fork `work` into its own session; return the child pid.

    `logged`: its output goes to the container log, as the container's main process's does.
    Otherwise (a `docker exec -d`) it goes nowhere: `docker logs` shows the output of the
    container's command only, PID 1 (Docker docs, "View container logs": docker logs shows the
    command's STDOUT and STDERR; moby/moby#19616: output of an exec'd process does not appear).
    """
    path = log_path(host_dir, container_id) if logged else Path(os.devnull)
    path.parent.mkdir(exist_ok=True)
    pid = os.fork()
    if pid:
        return pid
    code = 1
    try:
        os.setsid()
        out = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
        null = os.open(os.devnull, os.O_RDONLY)
        os.dup2(null, 0)
        os.dup2(out, 1)
        os.dup2(out, 2)
        signal.signal(signal.SIGTERM, lambda *_: os._exit(143))
        code = work()
        on_exit(code)
    finally:
        with contextlib.suppress(Exception):
            sys.stdout.flush()
            sys.stderr.flush()
        os._exit(code)


def run_apart(work: Callable[[], int], started: Callable[[int], None]) -> int:
    """Run `work` in a child of its own session and wait for it; its exit code.

    Why: a `docker exec` process is started by the daemon (containerd-shim), not by the client,
    so killing the client, or its whole process group, leaves it running in the container
    (docker/cli#5309, 2024, Docker 26.1: `kill -- -$$` ends `docker exec -i test sleep 300`
    and `sleep 300` stays in `docker exec test ps aux`; moby/moby#9098 and #35703: exec has no
    signal forwarding and no kill API). `started(pid)` records the child with its container.
    Output goes where the client's goes.
    """
    pid = os.fork()
    if pid == 0:
        code = 1
        try:
            os.setsid()
            signal.signal(signal.SIGTERM, lambda *_: os._exit(143))
            code = work()
        finally:
            with contextlib.suppress(Exception):
                sys.stdout.flush()
                sys.stderr.flush()
            os._exit(code)
    started(pid)
    _, status = os.waitpid(pid, 0)
    code = os.waitstatus_to_exitcode(status)
    return 128 - code if code < 0 else code  # killed by a signal: 128 + its number, as sh says
