"""`ssh [OPTIONS] [USER@]HOST COMMAND...` from one simulated host to another of its cluster.

What OpenSSH's client does, as ssh(1) describes it: the words after the destination are joined
with spaces into one command line that the remote user's shell runs; stdin, stdout and stderr
are forwarded; "ssh exits with the exit status of the remote command or with 255 if an error
occurred" (a command killed by a signal included). An address nobody answers on, one this host
has no route to, or a peer that is down (the cluster's `down` fault: powered off, so nothing
answers the ARP for its address) ends with ssh's own `ssh: connect to host ADDR port 22: No route
to host` and status 255, the line OpenSSH prints when connect(2) fails with EHOSTUNREACH (seen
verbatim in public rsync/CI logs, e.g. `ssh: connect to host … port 22: No route to host` before
`rsync: connection unexpectedly closed`); it is also what Scout's own SSH is told for a down worker
(sim/host_server.py). A peer whose host key or login this host's account lacks gets ssh's
refusal (peer_trust.py).

The peer is found as rsync.py finds it, over the simulated fabric (fabric.peer_at). The command
is started by the PEER's tool server (a LAUNCH request on its socket, wire.py), so it runs in
the peer's sandbox behind the peer's wall, as any SSH command of that host does
(confinement.py); this host's streams are handed over as they are, so a pipe into `ssh` feeds
the remote command. Signals this tool gets are passed on; if it is killed, its end of the
connection closes and the peer's server ends the command's session, as sshd does when the
connection drops.
"""

from __future__ import annotations

import contextlib
import os
import signal
import socket
import sys
from pathlib import Path
from typing import Any

from . import fabric, peer_trust
from .state import read_state
from .wire import LAUNCH, SOCKET_DIR, SOCKET_NAME, STD_STREAMS, encode_request

ERROR_STATUS = 255
# Options that take a value (ssh(1) SYNOPSIS): -B -b -c -D -E -e -F -I -i -J -L -l -m -O -o -P
# -p -R -S -W -w.
_VALUE_OPTS = set("BbcDEeFIiJLlmOoPpRSWw")
_FORWARDED = (signal.SIGHUP, signal.SIGINT, signal.SIGTERM, signal.SIGUSR1, signal.SIGUSR2)


def _parse(args: list[str]) -> tuple[str | None, list[str]]:
    """(destination, command words) from ssh's argv."""
    i = 0
    while i < len(args):
        arg = args[i]
        if arg == "--":
            i += 1
            break
        if not arg.startswith("-") or arg == "-":
            break
        letters = arg[1:]
        for pos, letter in enumerate(letters):
            if letter in _VALUE_OPTS:
                if pos == len(letters) - 1:
                    i += 1  # the value is the next word
                break
        i += 1
    if i >= len(args):
        return None, []
    return args[i], args[i + 1 :]


def run_ssh(args: list[str], state: dict[str, Any], host_dir: Path) -> int:
    destination, words = _parse(args)
    if destination is None:
        sys.stderr.write(
            "usage: ssh [-46AaCfGgKkMNnqsTtVvXxYy] [-B bind_interface] [-b bind_address]\n"
            "           [-c cipher_spec] [-D [bind_address:]port] [-E log_file] ...\n"
            "           destination [command [argument ...]]\n"
        )
        return ERROR_STATUS
    address = destination.rpartition("@")[2]
    peer = fabric.peer_at(state, host_dir, address)
    if peer is None:
        sys.stderr.write(f"ssh: connect to host {address} port 22: No route to host\n")
        return ERROR_STATUS
    refused = peer_trust.refusal(state, read_state(peer), destination)
    if refused is not None:
        sys.stderr.write(refused)
        return ERROR_STATUS
    try:
        return _run_on(peer, " ".join(words))
    except OSError as exc:
        sys.stderr.write(f"ssh: connect to host {address} port 22: {exc.strerror}\n")
        return ERROR_STATUS


def _run_on(peer: Path, command: str) -> int:
    """Start `command` on the peer's sandbox with this process's streams; its exit status."""
    dir_fd = os.open(peer / SOCKET_DIR, os.O_RDONLY | os.O_DIRECTORY)
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        sock.connect(f"/proc/self/fd/{dir_fd}/{SOCKET_NAME}")
    finally:
        os.close(dir_fd)
    args = [os.fsencode(command)] if command else []  # no command: a shell reading stdin
    request = encode_request(LAUNCH, b"", b"012", args, [])
    fds = b"".join(fd.to_bytes(4, sys.byteorder) for fd in STD_STREAMS)
    sys.stdout.flush()
    sock.sendmsg([request], [(socket.SOL_SOCKET, socket.SCM_RIGHTS, fds)])

    def pass_on(signum: int, _frame: object) -> None:
        with contextlib.suppress(OSError):
            sock.send(b"k%d\n" % signum)

    for sig in _FORWARDED:
        signal.signal(sig, pass_on)
    answer = b""
    while not answer.endswith(b"\n"):
        chunk = sock.recv(64)
        if not chunk:
            sys.stderr.write("Connection closed by remote host\n")
            return ERROR_STATUS
        answer += chunk
    answer = answer.strip()
    return int(answer[1:]) if answer.startswith(b"x") else ERROR_STATUS
