"""Unified memory as `/proc/meminfo` and `free` show it, derived from the host state.

Running containers hold their `memory_kb`; stopping one gives it back, which is how the sim shows
that the old vLLM container was what filled the Spark.
"""

from __future__ import annotations

import sys
from typing import Any

from .units import human_binary


def memory_kb(state: dict[str, Any]) -> dict[str, int]:
    """MemTotal, MemFree, MemAvailable, Buffers, Cached, Shmem, SwapTotal, SwapFree in kB."""
    mem = state["memory"]
    containers = state["docker"]["containers"].values()
    held = sum(c["memory_kb"] for c in containers if c["state"] == "running")
    total, cache, buffers = mem["total_kb"], mem["cache_kb"], mem["buffers_kb"]
    used = min(mem["used_kb"] + held, total - cache - buffers)
    free = total - used - cache - buffers
    return {
        "MemTotal": total,
        "MemFree": free,
        "MemAvailable": free + buffers + cache * 9 // 10,
        "Buffers": buffers,
        "Cached": cache,
        "Shmem": mem["shared_kb"],
        "SwapTotal": mem["swap_total_kb"],
        "SwapFree": mem["swap_total_kb"] - mem["swap_used_kb"],
    }


def render_meminfo(state: dict[str, Any]) -> str:
    m = memory_kb(state)
    anon = m["MemTotal"] - m["MemFree"] - m["Cached"] - m["Buffers"]
    rows = [
        ("MemTotal", m["MemTotal"]),
        ("MemFree", m["MemFree"]),
        ("MemAvailable", m["MemAvailable"]),
        ("Buffers", m["Buffers"]),
        ("Cached", m["Cached"]),
        ("SwapCached", 0),
        ("Active", anon * 3 // 4 + m["Cached"] // 3),
        ("Inactive", anon // 4 + m["Cached"] * 2 // 3),
        ("Active(anon)", anon * 3 // 4),
        ("Inactive(anon)", anon // 4),
        ("Active(file)", m["Cached"] // 3),
        ("Inactive(file)", m["Cached"] * 2 // 3),
        ("Unevictable", 30720),
        ("Mlocked", 30720),
        ("SwapTotal", m["SwapTotal"]),
        ("SwapFree", m["SwapFree"]),
        ("Zswap", 0),
        ("Zswapped", 0),
        ("Dirty", 1024),
        ("Writeback", 0),
        ("AnonPages", anon),
        ("Mapped", 412672),
        ("Shmem", m["Shmem"]),
        ("KReclaimable", 226304),
        ("Slab", 618496),
        ("SReclaimable", 226304),
        ("SUnreclaim", 392192),
        ("KernelStack", 24576),
        ("PageTables", 21504),
        ("SecPageTables", 0),
        ("NFS_Unstable", 0),
        ("Bounce", 0),
        ("WritebackTmp", 0),
        ("CommitLimit", m["MemTotal"] // 2 + m["SwapTotal"]),
        ("Committed_AS", anon + 4194304),
        ("VmallocTotal", 133141626880),
        ("VmallocUsed", 123904),
        ("VmallocChunk", 0),
        ("Percpu", 12800),
        ("HardwareCorrupted", 0),
        ("AnonHugePages", 0),
        ("ShmemHugePages", 0),
        ("ShmemPmdMapped", 0),
        ("FileHugePages", 0),
        ("FilePmdMapped", 0),
        ("CmaTotal", 0),
        ("CmaFree", 0),
        ("Unaccepted", 0),
    ]
    lines = [f"{(key + ':'):<16}{value:>8} kB" for key, value in rows]
    lines += [
        f"{'HugePages_Total:':<16}{0:>8}",
        f"{'HugePages_Free:':<16}{0:>8}",
        f"{'HugePages_Rsvd:':<16}{0:>8}",
        f"{'HugePages_Surp:':<16}{0:>8}",
        f"{'Hugepagesize:':<16}{2048:>8} kB",
        f"{'Hugetlb:':<16}{0:>8} kB",
    ]
    return "\n".join(lines) + "\n"


_FREE_HEADER = "               total        used        free      shared  buff/cache   available"


def run_free(args: list[str], state: dict[str, Any]) -> int:
    """`free` with -b/-k/-m/-g/-h (procps-ng 4 layout: used = total - available)."""
    unit = "k"
    for arg in args:
        flags = arg.lstrip("-")
        if arg in ("--bytes", "--kibi", "--mebi", "--gibi", "--human"):
            flags = {"--bytes": "b", "--kibi": "k", "--mebi": "m", "--gibi": "g"}.get(arg, "h")
        for flag in flags:
            if flag in "bkmgh":
                unit = flag
            elif flag not in "wtl":
                sys.stderr.write(f"free: invalid option -- '{flag}'\n")
                return 1
    m = memory_kb(state)
    cache = m["Cached"] + m["Buffers"]
    mem_row = [
        m["MemTotal"],
        m["MemTotal"] - m["MemAvailable"],
        m["MemFree"],
        m["Shmem"],
        cache,
        m["MemAvailable"],
    ]
    swap_row = [m["SwapTotal"], m["SwapTotal"] - m["SwapFree"], m["SwapFree"]]

    def cell(kb: int) -> str:
        if unit == "h":
            return human_binary(kb * 1024)
        return str(kb * 1024 // {"b": 1, "k": 1024, "m": 1024**2, "g": 1024**3}[unit])

    print(_FREE_HEADER)
    print(f"{'Mem:':<8}" + "".join(f" {cell(v):>11}" for v in mem_row))
    print(f"{'Swap:':<8}" + "".join(f" {cell(v):>11}" for v in swap_row))
    return 0
