"""What an engine checks on every node before it loads: the port, the model in the HF cache,
free memory, NCCL/Gloo interfaces; then which transport NCCL ends up with. The messages are the
engines' own (vLLM, PyTorch, NCCL)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from . import fabric
from .memory import memory_kb
from .serve_spec import HF_MOUNT, EngineError, Node, ServeSpec
from .state import read_state

if TYPE_CHECKING:
    from .container import Container

_GIB_KB = 1024 * 1024


def check_port(spec: ServeSpec, ctr: Container) -> None:
    for name, c in read_state(ctr.host_dir)["docker"]["containers"].items():
        if name != ctr.name and c["state"] == "running" and spec.port in c.get("listen", []):
            raise EngineError(
                f"OSError: [Errno 98] error while attempting to bind on address "
                f"('{spec.host}', {spec.port}): address already in use"
            )


def check_node(spec: ServeSpec, node: Node, nodes: int, remote: bool) -> None:
    """`node` is one of `nodes` that hold the model, each an equal share of its layers/shards."""
    state = read_state(node.host_dir)
    container = state["docker"]["containers"][node.container]
    prefix = f"(RayWorkerWrapper pid={4100 + len(node.container)}, ip={node.ip}) " if remote else ""
    mounted = any(m.split(":")[1:2] == [HF_MOUNT] for m in container.get("mounts", []))
    cached = state.get("hf_cache", {}).get(spec.model)
    if not mounted or cached is None or cached.get("partial"):
        where = "" if mounted else f" ({HF_MOUNT} is not mounted in container {node.container})"
        if node.env.get("HF_HUB_OFFLINE") == "1":
            raise EngineError(
                f"{prefix}ERROR: model {spec.model} not found in cache on {node.ip}{where} and "
                "HF_HUB_OFFLINE=1\n"
                f"{prefix}huggingface_hub.errors.LocalEntryNotFoundError: Cannot find an "
                "appropriate cached snapshot folder for the specified revision on the local disk "
                "and outgoing traffic has been disabled. To enable repo look-ups and downloads "
                "online, pass 'local_files_only=False' as input."
            )
        raise EngineError(
            f"{prefix}ERROR: model {spec.model} not found in cache on {node.ip}{where}\n"
            f"{prefix}OSError: We couldn't connect to 'https://huggingface.co' to load the files, "
            "and couldn't find them in the cached files."
        )
    mem = memory_kb(state)
    total_gib = mem["MemTotal"] / _GIB_KB
    wanted = spec.util * mem["MemTotal"]
    # On unified memory (GB10) CUDA reports about MemFree, not MemAvailable: page cache left by
    # an earlier load counts as used until it is dropped (vLLM issue #48140, docs/sources.md §1.2)
    unified = not state["gpu"].get("memory_total_mib")
    free = mem["MemFree"] if unified else mem["MemAvailable"]
    if free < wanted:
        raise EngineError(
            f"{prefix}ValueError: Free memory on device ({free / _GIB_KB:.2f}/"
            f"{total_gib:.2f} GiB) on startup is less than desired GPU memory utilization "
            f"({spec.util}, {wanted / _GIB_KB:.2f} GiB). Decrease GPU memory utilization or "
            "reduce GPU memory used by other processes."
        )
    weights_kb = state["hf_cache"][spec.model]["size_gb"] * 1e9 / 1024 / max(nodes, 1)
    gpus = state["gpu"]["count"]
    if state["gpu"].get("memory_total_mib"):  # discrete GPUs: each holds its shard
        total_gib = state["gpu"]["memory_total_mib"] / 1024
        wanted = spec.util * state["gpu"]["memory_total_mib"] * 1024
        weights_kb /= min(gpus, spec.world)
    if weights_kb > wanted * 0.95:
        raise EngineError(
            f"{prefix}torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 1.50 GiB. "
            f"GPU 0 has a total capacity of {total_gib:.2f} GiB of which "
            f"{wanted / _GIB_KB * 0.02:.2f} GiB is free. Model weights need "
            f"{weights_kb / _GIB_KB:.1f} GiB per GPU but the budget "
            f"at gpu_memory_utilization={spec.util} is {wanted / _GIB_KB:.1f} GiB."
        )
    if spec.world > 1:
        for var in ("NCCL_SOCKET_IFNAME", "GLOO_SOCKET_IFNAME"):
            if fabric.socket_ifname_problem(node.env.get(var), state):
                raise EngineError(_ifname_error(var, node, prefix, state))


def _ifname_error(var: str, node: Node, prefix: str, state: dict[str, Any]) -> str:
    value = node.env[var]
    tag = f"{state['hostname']}:{4200 + len(node.container)}:{4200 + len(node.container)} [0]"
    if var == "GLOO_SOCKET_IFNAME":
        return (
            f"{prefix}RuntimeError: [enforce fail at ../third_party/gloo/gloo/transport/tcp/"
            f"device.cc:83] ifa != nullptr. Unable to find address for: {value}"
        )
    return (
        f"{prefix}{tag} NCCL INFO NCCL_SOCKET_IFNAME set to {value}\n"
        f"{prefix}{tag} NCCL WARN Bootstrap : no socket interface found\n"
        f"{prefix}torch.distributed.DistBackendError: NCCL error in: "
        "../torch/csrc/distributed/c10d/ProcessGroupNCCL.cpp:3356, internal error - please "
        "report this issue to the NCCL developers, NCCL version 2.28.9\n"
        "ncclInternalError: Internal check failed.\n"
        "Last error:\nBootstrap : no socket interface found"
    )


def nccl_transport(nodes: list[Node]) -> str:
    """`roce`, or `socket` where a node's container sees no usable RDMA device; with
    NCCL_NET=IB NCCL refuses to fall back and the engine stops (NCCL src/net.cc, ncclNetInit:
    `Error: network %s not found.`)."""
    if len(nodes) == 1:
        return "local"
    for node in nodes:
        state = read_state(node.host_dir)
        container = state["docker"]["containers"][node.container]
        if fabric.usable_rdma(node.env, container, state):
            continue
        if node.env.get("NCCL_NET", "").upper() == "IB":
            tag = f"{state['hostname']}:4300:4300 [0]"
            raise EngineError(
                f"{tag} NCCL WARN Error: network IB not found.\n"
                "torch.distributed.DistBackendError: NCCL error in: "
                "../torch/csrc/distributed/c10d/ProcessGroupNCCL.cpp:3356, invalid usage (run "
                "with NCCL_DEBUG=WARN for details), NCCL version 2.28.9\n"
                "ncclInvalidUsage: This usually reflects invalid usage of NCCL library."
            )
        return "socket"
    return "roce"
