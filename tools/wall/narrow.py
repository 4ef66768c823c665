"""What runs unasked on a host whose reads cannot be walled: exact argument shapes, nothing else.

On such a host the classifier's guess would be the only wall, so a shell read runs without a
human only when the whole command line is one of these shapes (a fixed program, fixed options,
at most a value of a fixed form): no shell operators, no variables, no paths but the ones
named. Everything else asks. The probe pack runs too (tools/recon/probe.py), being Scout's own.
"""

from __future__ import annotations

import re

_FIELD = r"[a-z0-9_.]+(,[a-z0-9_.]+)*"
_IFACE = r"[A-Za-z0-9_.:-]{1,15}"
READ_SHAPES = tuple(
    re.compile(shape)
    for shape in (
        r"hostname",
        r"uname( -[asrnmv]{1,6})?",
        r"nproc",
        r"uptime",
        r"id( -[nG]{1,2})?",
        r"free( -[bhgm])?",
        r"df( -[hB1]{1,3})?( /)?",
        r"lscpu",
        r"cat /proc/(meminfo|cpuinfo|loadavg|uptime|version)",
        r"cat /etc/(os-release|dgx-release|lsb-release|hostname)",
        r"nvidia-smi( -L| -q| topo -m)?",
        rf"nvidia-smi --query-gpu={_FIELD} --format=csv(,noheader)?(,nounits)?",
        r"nvcc --version",
        r"ip( -j| -br| -4| -6){0,3} (addr|link|route)( show)?",
        rf"ip( -j| -br| -4){{0,2}} (addr|link) show( dev)? {_IFACE}",
        r"ibdev2netdev( -v)?",
        r"rdma link( show)?",
        rf"ethtool {_IFACE}",
        r"ss -[tlnpu]{1,5}",
        r"python3 --version",
        r"docker (ps|images)( -a)?",
    )
)


def allowed_unwalled(command: str) -> bool:
    """Whether `command`, exactly as written (spaces collapsed), is one of the read shapes."""
    line = " ".join(command.split())
    return any(shape.fullmatch(line) for shape in READ_SHAPES)
