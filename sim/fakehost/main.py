"""Entry point of every fake tool: find the host, honour an injected hang, run the tool."""

from __future__ import annotations

import os
import re
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from . import (
    curl,
    docker,
    drop_caches,
    du,
    gids,
    git,
    gpu,
    gpu_faults,
    hf,
    host_ray,
    kill,
    memory,
    nccl_tests,
    network,
    perftest,
    pkill,
    rdma,
    rsync,
    services,
    ssh,
    system,
)
from .state import read_state, resolve_host_dir

Runner = Callable[[list[str], dict[str, Any], Path], int]


def _plain(fn: Callable[[list[str], dict[str, Any]], int]) -> Runner:
    return lambda args, state, _host_dir: fn(args, state)


TOOLS: dict[str, Runner] = {
    "nvidia-smi": _plain(gpu.run_nvidia_smi),
    "lspci": _plain(gpu_faults.run_lspci),
    "dmesg": _plain(gpu_faults.run_dmesg),
    "pgrep": _plain(gpu_faults.run_pgrep),
    "tee": drop_caches.run_tee,
    "systemctl": services.run_systemctl,
    "sync": services.run_sync,
    "ray": host_ray.run_host_ray,
    "free": _plain(memory.run_free),
    "ibdev2netdev": _plain(rdma.run_ibdev2netdev),
    "ibstat": _plain(rdma.run_ibstat),
    "rdma": _plain(rdma.run_rdma),
    "ibv_devinfo": _plain(gids.run_ibv_devinfo),
    "ip": network.run_ip,
    "ethtool": _plain(network.run_ethtool),
    "uname": _plain(system.run_uname),
    "hostname": _plain(system.run_hostname),
    "lscpu": _plain(system.run_lscpu),
    "nproc": _plain(system.run_nproc),
    "cat": system.run_cat,
    "df": _plain(system.run_df),
    "du": du.run_du,
    "id": _plain(system.run_id),
    "whoami": _plain(system.run_whoami),
    "ps": _plain(system.run_ps),
    "ss": _plain(system.run_ss),
    "python3": _plain(system.run_python3),
    "python": _plain(system.run_python3),
    "pip": _plain(system.run_pip),
    "pip3": _plain(system.run_pip),
    "nvcc": _plain(system.run_nvcc),
    "docker": docker.run_docker,
    "git": git.run_git,
    "curl": curl.run_curl,
    "pkill": pkill.run_pkill,
    "kill": kill.run_kill,
    "hf": hf.run_hf,
    "huggingface-cli": hf.run_huggingface_cli,
    "rsync": rsync.run_rsync,
    "ssh": ssh.run_ssh,
    "mpirun": nccl_tests.run_mpirun,
    "all_gather_perf": nccl_tests.run_nccl_test("all_gather_perf"),
    "all_reduce_perf": nccl_tests.run_nccl_test("all_reduce_perf"),
    "ib_write_bw": perftest.run_perftest("ib_write_bw"),
    "ib_read_bw": perftest.run_perftest("ib_read_bw"),
}


def hang_requested(tool: str, args: list[str], state: dict[str, Any]) -> bool:
    """The scenario's `faults.hang` pattern matches this command line."""
    pattern = state.get("faults", {}).get("hang")
    return bool(pattern and re.search(pattern, " ".join([tool, *args])))


def _hang_if_asked(tool: str, args: list[str], state: dict[str, Any]) -> None:
    """An injected hang blocks until a signal (the `timeout` wrapper, a client kill) ends us."""
    if hang_requested(tool, args, state):
        while True:
            time.sleep(3600)


def main(tool: str, default_host_dir: str) -> int:
    host_dir = resolve_host_dir(default_host_dir)
    state = read_state(host_dir)
    args = sys.argv[1:]
    _hang_if_asked(tool, args, state)
    try:
        code = TOOLS[tool](args, state, host_dir)
        sys.stdout.flush()
    except BrokenPipeError:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return 141
    except KeyboardInterrupt:
        return 130
    return code
