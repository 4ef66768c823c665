"""The two walls of a simulated host: one around its tool server, one around its commands.

The simulator runs whatever a live model sends, on the user's own machine. Every process of a
host descends from its tool server (server.py), which confines itself at start and each command
it launches before the command runs:

- the host (`confine_host`): the server, the fake tools it forks and everything below may
  write only beneath the simulator's hosts folder (a fake tool may act on a peer, as a copy
  over the fabric fills the peer's cache) and /dev/null, bind no TCP port, signal and reach
  abstract Unix sockets only inside the host. Fake tools are our code; this wall is there in
  case one of them takes a path it should not;
- a command (`confine_command`: an SSH command, a `sh -c` script, a job) may in addition write
  only beneath its own host's home/ and tmp/ (+ /dev/null): not its host's state, bin/,
  sandbox/ or run/, nor a peer; execute only the host's bin/bin-script/sandbox folders and the
  programs in sandbox/exec-allow; bind or connect no TCP port; create no socket at all
  (seccomp.py); and signal nothing outside itself. On a host whose scenario says its kernel
  has no Landlock, the command's own Landlock calls fail with ENOSYS, as on such a kernel
  (landlock(7): "ENOSYS: Landlock is not supported by the kernel"). Peer effects and kills
  of other commands' processes (a job's `kill`) go through the fake tools, in the host's
  domain.

A root simulator's host keeps no capability (root's files stay root's: Landlock, not file
modes, keeps them unwritten). Where the kernel lacks Landlock ABI 6 or the seccomp filter, a
command is not confined and the sandbox's restricted bash is all there is (launch refuses
unrestricted scripts; see sandbox/launch): fail closed.
"""

from __future__ import annotations

import ctypes
import os
import struct
from collections.abc import Iterable

from . import landlock, seccomp

PR_CAPBSET_DROP, PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL = 24, 47, 4
CAPABILITY_VERSION_3 = 0x20080522
COMMAND_ABI = 6  # scoped signals and abstract sockets
COMMAND_WRITES = ("home", "tmp")  # beneath a host folder
EXEC_FOLDERS = ("bin", "bin-script", "sandbox")
EXEC_ALLOW_FILE = "sandbox/exec-allow"
NO_LANDLOCK_FILE = "sandbox/no-landlock"  # the scenario's kernel has no Landlock

_libc = ctypes.CDLL(None, use_errno=True)


class ConfineError(Exception):
    """A wall could not be built whole (what was applied before the error stays applied)."""


def drop_capabilities() -> None:
    """Give up every capability, for good (only root has any to give up)."""
    if os.geteuid() != 0:
        return
    with open("/proc/sys/kernel/cap_last_cap") as f:
        last = int(f.read())
    for cap in range(last + 1):
        _libc.prctl(PR_CAPBSET_DROP, cap, 0, 0, 0)
    _libc.prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0)
    header = struct.pack("=Ii", CAPABILITY_VERSION_3, 0)
    data = bytes(24)  # two (effective, permitted, inheritable) words, all empty
    if _libc.capset(ctypes.c_char_p(header), ctypes.c_char_p(data)) != 0:
        raise ConfineError(f"capset: {os.strerror(ctypes.get_errno())}")


def confine_host(hosts_dir: str) -> int:
    """Wall in this tool server (see above); return the Landlock ABI used."""
    abi = landlock.abi_version()
    ruleset = landlock.Ruleset(
        abi,
        handled_fs=landlock.writes(abi),
        handled_net=landlock.NET_BIND_TCP if abi >= 4 else 0,
        scoped=landlock.SCOPE_SIGNAL | landlock.SCOPE_ABSTRACT_UNIX_SOCKET if abi >= 6 else 0,
    )
    ruleset.allow([hosts_dir], landlock.writes(abi))
    ruleset.allow([os.devnull], landlock.WRITE_FILE | landlock.TRUNCATE)
    try:
        drop_capabilities()
        ruleset.restrict_self()
    except landlock.LandlockError as exc:
        raise ConfineError(str(exc)) from exc
    return abi


def executables(host_dir: str) -> list[str]:
    """The programs a command may run besides its host's folders (sim/exec_allow.py wrote it)."""
    with open(os.path.join(host_dir, EXEC_ALLOW_FILE)) as f:
        return [line for line in f.read().split("\n") if line]


def command_ruleset(host_dir: str, programs: Iterable[str]) -> landlock.Ruleset:
    abi = landlock.abi_version()
    if abi < COMMAND_ABI:
        raise ConfineError(
            f"Landlock ABI {abi} (Linux 6.12+ has {COMMAND_ABI}: scoped signals and sockets)"
        )
    ruleset = landlock.Ruleset(
        abi,
        handled_fs=landlock.EXECUTE | landlock.writes(abi),
        handled_net=landlock.NET_BIND_TCP | landlock.NET_CONNECT_TCP,
        scoped=landlock.SCOPE_SIGNAL | landlock.SCOPE_ABSTRACT_UNIX_SOCKET,
    )
    ruleset.allow([os.path.join(host_dir, sub) for sub in COMMAND_WRITES], landlock.writes(abi))
    ruleset.allow([os.devnull], landlock.WRITE_FILE | landlock.TRUNCATE)
    ruleset.allow([os.path.join(host_dir, sub) for sub in EXEC_FOLDERS], landlock.EXECUTE)
    ruleset.allow(programs, landlock.EXECUTE)
    return ruleset


def confine_command(host_dir: str) -> None:
    """Wall in this process, about to become a host's command (see above); all or nothing."""
    try:
        ruleset = command_ruleset(host_dir, executables(host_dir))
        seccomp.native_arch()
        drop_capabilities()
        ruleset.restrict_self()
        seccomp.install(hide_landlock=os.path.exists(os.path.join(host_dir, NO_LANDLOCK_FILE)))
    except (OSError, landlock.LandlockError, seccomp.SeccompError) as exc:
        raise ConfineError(str(exc)) from exc
