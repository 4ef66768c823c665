"""nccl-tests (`all_gather_perf`, `all_reduce_perf`, …) alone or under `mpirun -np N -H a,b`.

The table is nccl-tests 2.18's as a Spark owner captured it on two GB10s
(tests/fixtures/recon/spark_nccl_all_gather_perf_healthy.txt): the header, `# Using devices`
with one line per rank, one row per size from -b to -e by -f (printed as each size finishes,
on the simulated clock), `# Avg bus bandwidth`, the closing lines. The bus bandwidth is what
that healthy pair measured (~21.4 GB/s) when every rank's host reaches the others over RoCE
ports with carrier (NCCL_IB_HCA honoured), else what the slowest socket link carries (NCCL
falls back to TCP); a single rank moves nothing (bus bandwidth 0).

mpirun needs the program on every rank's host: nccl-tests is not packaged, NVIDIA's NCCL
playbook builds it into ~/nccl-tests/build on each node (docs/sources.md §2.2), and a fresh Spark
has none (sim/scenario.py FabricTests). Where it is missing, mpirun stops as Open MPI 4.1 does
(public reports, e.g. fastpm/fastpm#101, aiidateam/aiida-tutorials#465): `mpirun was unable to
launch the specified application as it could not access / or execute an executable:` with
`Executable:` and `Node:` lines and `while attempting to start process rank N.` between rules.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Any

from . import fabric
from .links import carrier
from .pace import SimulatorGone, ticks
from .state import read_state

_RULE = "-" * 74
ROCE_BUSBW_GB_S = 21.40  # the healthy capture's average over 2 x GB10, one cable
WARMUP, ITERS = 10, 50
_SIZES = {"K": 1024, "M": 1024**2, "G": 1024**3}


def _bytes(text: str) -> int:
    unit = text[-1:].upper()
    return int(float(text[:-1]) * _SIZES[unit]) if unit in _SIZES else int(text)


def _option(args: list[str], short: str, long: str, default: str) -> str:
    for i, arg in enumerate(args):
        if arg in (short, long) and i + 1 < len(args):
            return args[i + 1]
        if arg.startswith(long + "="):
            return arg.split("=", 1)[1]
    return default


def run_perf(name: str, args: list[str], host_dir: Path, ranks: list[Path]) -> int:
    """Run `name` (an nccl-tests binary) with one rank on each host folder in `ranks`."""
    low = _bytes(_option(args, "-b", "--minbytes", "32M"))
    high = _bytes(_option(args, "-e", "--maxbytes", "32M"))
    factor = int(_option(args, "-f", "--stepfactor", "2"))
    busbw = _bus_bandwidth(host_dir, ranks)
    states = [read_state(rank) for rank in ranks]
    print(f"# nccl-tests version 2.18.3 nccl-headers=22809 nccl-library=22809\n"
          f"# Collective test starting: {name}\n"
          f"# nThread 1 nGpus 1 minBytes {low} maxBytes {high} step: {factor}(factor) warmup "
          f"iters: {WARMUP} iters: {ITERS} agg iters: 1 validation: 1 graph: 0 unalign: 0\n#\n"
          "# Using devices")  # fmt: skip
    for rank, state in enumerate(states):
        print(f"#  Rank {rank:2d} Group  0 Pid {os.getpid() + rank:6d} on {state['hostname']} "
              f"device  0 [000f:01:00] NVIDIA GB10")  # fmt: skip
    print("#\n" + _HEADER, flush=True)
    sizes, size = [], low
    while size <= high:
        sizes.append(size)
        size *= factor
    shares = (len(ranks) - 1) / len(ranks) if ranks else 0
    algbw = busbw / shares if shares else 0.0
    try:
        for size in sizes:
            seconds = size * ITERS / (algbw * 1e9) if algbw else 0.001
            for _ in ticks(seconds, states[0], host_dir):
                pass
            time_us = size / (algbw * 1e9) * 1e6 if algbw else 0.0
            row = f"{time_us:8.1f} {algbw:7.2f} {busbw:7.2f}       0"
            count = size // 4 // max(1, len(ranks))  # floats per rank
            print(f"{size:12d} {count:13d}     float    none      -1 {row} {row}", flush=True)
    except SimulatorGone:
        return 143
    print(f"# Out of bounds values : 0 OK\n# Avg bus bandwidth    : {busbw:.4f} \n#\n"
          f"# Collective test concluded: {name}\n#", flush=True)  # fmt: skip
    return 0


_HEADER = (
    "#                                                              out-of-place"
    "                       in-place          \n"
    "#       size         count      type   redop    root     time   algbw   busbw #wrong"
    "     time   algbw   busbw #wrong \n"
    "#        (B)    (elements)                               (us)  (GB/s)  (GB/s)       "
    "      (us)  (GB/s)  (GB/s)         "
)


def _bus_bandwidth(host_dir: Path, ranks: list[Path]) -> float:
    """GB/s: the healthy capture's over RoCE on every rank, else the slowest socket link."""
    if len(ranks) < 2:
        return 0.0
    wanted = [h.split(":")[0] for h in os.environ.get("NCCL_IB_HCA", "").lstrip("^=").split(",")]
    ib_off = os.environ.get("NCCL_IB_DISABLE", "0") == "1"
    roce, slowest = True, None
    for rank in ranks:
        state = read_state(rank)
        ports = [
            nic
            for nic in state["nics"].values()
            if nic.get("rdma_dev") and carrier(nic) and nic["addresses"]
            and (not any(wanted) or any(nic["rdma_dev"].startswith(w) for w in wanted if w))
        ]  # fmt: skip
        roce = roce and bool(ports) and not ib_off
        primary = fabric.primary_ip(state)
        for nic in state["nics"].values():
            if any(a.split("/")[0] == primary for a in nic["addresses"]):
                speed = float(nic.get("speed_mbps") or 1000) / 8 / 1000 * 0.9
                slowest = speed if slowest is None else min(slowest, speed)
    return ROCE_BUSBW_GB_S if roce else round(slowest or 0.1, 2)


def run_nccl_test(name: str) -> Any:
    """The fake for one nccl-tests binary run directly: one rank, on this host."""

    def run(args: list[str], state: dict[str, Any], host_dir: Path) -> int:
        return run_perf(name, args, host_dir, [host_dir])

    return run


def run_mpirun(args: list[str], state: dict[str, Any], host_dir: Path) -> int:
    """`mpirun -np N -H a,b [-x VAR[=v]] PROGRAM ARGS`: one rank per listed host (nccl-tests)."""
    hosts, count, i = ["localhost"], 1, 0
    while i < len(args) and args[i].startswith("-"):
        if args[i] in ("-H", "--host", "-host") and i + 1 < len(args):
            hosts = [h.split(":")[0] for h in args[i + 1].split(",")]
        elif args[i] in ("-np", "-n", "--np") and i + 1 < len(args):
            count = int(args[i + 1])
        elif args[i] == "-x" and i + 1 < len(args) and "=" in args[i + 1]:
            key, _, value = args[i + 1].partition("=")
            os.environ[key] = value
        i += 2 if args[i] in ("-H", "--host", "-host", "-np", "-n", "--np", "-x") else 1
    program, rest = (args[i], args[i + 1 :]) if i < len(args) else ("", [])
    if not program.endswith("_perf"):
        sys.stderr.write(f"mpirun: only nccl-tests programs run here, not {program!r}\n")
        return 1
    ranks = []
    for index in range(count):
        name = hosts[index % len(hosts)]
        found = _rank_host(state, host_dir, name)
        if found is None:
            sys.stderr.write(
                f"ssh: connect to host {name} port 22: No route to host\n"
                "--------------------------------------------------------------------------\n"
                "ORTE was unable to reliably start one or more daemons.\n"
            )
            return 1
        ranks.append(found)
    for index, rank in enumerate(ranks):
        if not _executable_on(rank, program, host_dir):
            sys.stderr.write(
                f"{_RULE}\nmpirun was unable to launch the specified application as it could "
                f"not access\nor execute an executable:\n\nExecutable: {program}\nNode: "
                f"{read_state(rank)['hostname']}\n\nwhile attempting to start process rank "
                f"{index}.\n{_RULE}\n"
            )
            return 1
    return run_perf(program.rsplit("/", 1)[-1], rest, host_dir, ranks)


def _executable_on(rank: Path, program: str, host_dir: Path) -> bool:
    """Whether `program` is an executable file on the rank's host. Each node resolves the same
    path itself, as Open MPI's daemons do: a path under this host's HOME is the same path under
    the rank's HOME (same user on every node, as NVIDIA's playbooks require); a bare name is
    looked up on its PATH."""
    home = str(host_dir / "home")
    if "/" not in program:
        found = rank / "bin" / program
    elif program.startswith(home + "/"):
        found = rank / "home" / program.removeprefix(home + "/")
    elif not program.startswith("/"):
        found = rank / "home" / program
    else:
        return False  # outside HOME: nothing of nccl-tests lives there on a Spark
    return found.is_file() and os.access(found, os.X_OK)


def _rank_host(state: dict[str, Any], host_dir: Path, name: str) -> Path | None:
    if name in ("localhost", "127.0.0.1", state["hostname"]):
        return host_dir
    for _path, peer in fabric.hosts(host_dir):
        if name == peer["hostname"]:
            name = fabric.primary_ip(peer)
    owner = fabric.owner_of(host_dir, name) if name[:1].isdigit() else None
    if owner is None or not fabric.reachable(state, host_dir, name):
        return None
    return owner[0]
