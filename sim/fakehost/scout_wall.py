"""Whether a fake tool's caller runs inside Scout's wall (tools/wall/host_helper.py).

A real host's kernel stops a walled command's writes, sockets and root powers itself; here the
work is done by the tool server on the caller's behalf, so the server asks the kernel about the
caller instead: every sandbox command carries the simulator's one seccomp filter (seccomp.py),
and Scout's helper stacks another (seccomp filters only add up, never come off:
Documentation/userspace-api/seccomp_filter.rst), so /proc/PID/status `Seccomp_filters:` of 2 or
more means the caller is inside the wall. Tools then fail as they do on a walled real host:
`ip` changes lose CAP_NET_ADMIN (network.py), `curl` reaches only the TCP ports the wall names
(curl.py; the helper tells its command which, in SCOUT_WALL), and tools that would write files or
open sockets as the caller are refused before they act.
"""

from __future__ import annotations

import os
import re

WALLED_ENV = "SCOUT_SIM_WALLED"  # set by the server for a tool whose caller is walled
SIM_FILTERS = 1
# Fake tools that act through the network or write files as their caller.
REFUSED = {
    "hf": "hf: [Errno 13] Permission denied",
    "huggingface-cli": "huggingface-cli: [Errno 13] Permission denied",
    "rsync": "rsync: failed to connect: Permission denied (13)",
    "ssh": "socket: Permission denied",
    "mpirun": "mpirun: could not create a socket: Permission denied",
    "pkill": "pkill: killing processes outside the caller: Operation not permitted",
}


def caller_walled(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/status") as status:
            for line in status:
                if line.startswith("Seccomp_filters:"):
                    return int(line.split()[1]) > SIM_FILTERS
    except (OSError, ValueError):
        return False
    return False


def walled_out(port: int) -> bool:
    """Whether a walled caller's wall keeps it from a TCP connection to `port`."""
    if os.environ.get(WALLED_ENV) != "1":
        return False
    named = re.search(r"tcp-([0-9-]+)", os.environ.get("SCOUT_WALL", ""))
    return named is None or str(port) not in named[1].split("-")
