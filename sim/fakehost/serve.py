"""`vllm serve` and `python3 -m sglang.launch_server` inside a container: check what the real
engine needs, print its log lines, and record a `serve` entry that the simulator turns into a
real HTTP endpoint (sim.engine). Checks, in the engine's order: the port is free, the nodes are
there (Ray placement group, or `--nnodes` ranks), the model is in every node's HF cache, memory
is free, NCCL/Gloo find their interface; then RoCE or socket transport sets the token rate.
"""

from __future__ import annotations

import os
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from . import engine_log, fabric, procs, ray
from .memory import memory_kb
from .state import locked_state, read_state

if TYPE_CHECKING:
    from .incontainer import Container

HF_MOUNT = "/root/.cache/huggingface"
_GIB_KB = 1024 * 1024


class EngineError(Exception):
    """The engine exits: the message is what its last log lines say."""


@dataclass
class ServeSpec:
    kind: str
    model: str
    tp: int = 1
    port: int = 8000
    host: str = "0.0.0.0"
    util: float = 0.9
    backend: str = ""
    nnodes: int = 1
    rank: int = 0
    master: str = ""
    headless: bool = False
    served_name: str = ""
    max_model_len: int = 262144


@dataclass
class Node:
    host_dir: Path
    container: str
    id: str
    ip: str
    env: dict[str, str] = field(default_factory=dict)


def _options(args: list[str]) -> tuple[list[str], dict[str, str]]:
    positional, opts, i = [], {}, 0
    while i < len(args):
        arg = args[i]
        if arg.startswith("-"):
            key, eq, value = arg.partition("=")
            if not eq and i + 1 < len(args) and not args[i + 1].startswith("-"):
                value, i = args[i + 1], i + 1
            opts[key] = value or "true"
        else:
            positional.append(arg)
        i += 1
    return positional, opts


def run_vllm(args: list[str], ctr: Container) -> int:
    if args[:1] != ["serve"]:
        sys.stderr.write(
            "usage: vllm [-h] [-v] {chat,complete,serve,bench,collect-env,run-batch}\n"
        )
        return 2
    positional, o = _options(args[1:])
    model = positional[0] if positional else o.get("--model", "")
    spec = ServeSpec(
        kind="vllm",
        model=model,
        tp=int(o.get("--tensor-parallel-size", o.get("-tp", "1"))),
        port=int(o.get("--port", "8000")),
        host=o.get("--host", "0.0.0.0"),
        util=float(o.get("--gpu-memory-utilization", "0.9")),
        backend=o.get("--distributed-executor-backend", ""),
        nnodes=int(o.get("--nnodes", "1")),
        rank=int(o.get("--node-rank", "0")),
        master=o.get("--master-addr", ""),
        headless="--headless" in o,
        served_name=o.get("--served-model-name", model),
        max_model_len=int(o.get("--max-model-len", "262144")),
    )
    return _serve(spec, ctr)


def run_sglang(args: list[str], ctr: Container) -> int:
    _positional, o = _options(args)
    model = o.get("--model-path", o.get("--model", ""))
    rank = int(o.get("--node-rank", "0"))
    spec = ServeSpec(
        kind="sglang",
        model=model,
        tp=int(o.get("--tp", o.get("--tp-size", "1"))),
        port=int(o.get("--port", "30000")),
        host=o.get("--host", "127.0.0.1"),
        util=float(o.get("--mem-fraction-static", "0.88")),
        nnodes=int(o.get("--nnodes", "1")),
        rank=rank,
        master=o.get("--dist-init-addr", "").rpartition(":")[0],
        headless=rank > 0,
        served_name=o.get("--served-model-name", model),
        max_model_len=int(o.get("--context-length", "262144")),
    )
    return _serve(spec, ctr)


def _log(ctr: Container, level: str, where: str, text: str) -> None:
    stamp = time.strftime("%m-%d %H:%M:%S")
    print(f"{level} {stamp} [{where}] {text}", flush=True)


def _serve(spec: ServeSpec, ctr: Container) -> int:
    if not spec.model:
        sys.stderr.write("error: the following arguments are required: model_tag\n")
        return 2
    state = read_state(ctr.host_dir)
    me = Node(ctr.host_dir, ctr.name, ctr.id, _node_ip(ctr.env, state), ctr.env)
    if spec.kind == "vllm":
        engine_log.banner("0.19.1", spec.model)
        _log(ctr, "INFO", "api_server.py:1885", "vLLM API server version 0.19.1")
        _log(
            ctr,
            "INFO",
            "utils.py:326",
            f"non-default args: {{'model': '{spec.model}', "
            f"'tensor_parallel_size': {spec.tp}, 'gpu_memory_utilization': {spec.util}}}",
        )
    else:
        _log(
            ctr,
            "INFO",
            "server_args.py:612",
            f"model_path='{spec.model}', tp_size={spec.tp}, "
            f"nnodes={spec.nnodes}, node_rank={spec.rank}, mem_fraction_static={spec.util}",
        )
    try:
        if spec.nnodes > 1 and spec.headless:
            return _run_rank(spec, me)
        _check_port(spec, ctr)
        nodes = _gather_nodes(spec, me)
        for node in nodes:
            _check_node(spec, node, remote=node is not me)
        transport = _transport(nodes)
    except EngineError as exc:
        sys.stderr.write(f"{exc}\n")
        sys.stdout.flush()
        return 1
    _announce(spec, nodes, transport, state)
    _record(spec, nodes, transport, ctr)
    procs.wait_while_running(ctr.host_dir, ctr.id)
    return 0


def _node_ip(env: dict[str, str], state: dict[str, Any]) -> str:
    for key in ("VLLM_HOST_IP", "SGLANG_HOST_IP", "RAY_OVERRIDE_NODE_IP_ADDRESS"):
        if env.get(key):
            return env[key]
    return fabric.primary_ip(state)


def _check_port(spec: ServeSpec, ctr: Container) -> None:
    for name, c in read_state(ctr.host_dir)["docker"]["containers"].items():
        if name != ctr.name and c["state"] == "running" and spec.port in c.get("listen", []):
            raise EngineError(
                f"OSError: [Errno 98] error while attempting to bind on address "
                f"('{spec.host}', {spec.port}): address already in use"
            )


def _gather_nodes(spec: ServeSpec, me: Node) -> list[Node]:
    state = read_state(me.host_dir)
    if spec.nnodes > 1:
        return [me, *_wait_for_ranks(spec, me, state)]
    if spec.tp <= 1:
        return [me]
    if spec.kind == "vllm" and (spec.backend == "ray" or ray.head_of(_as_ctr(me))):
        head = ray.head_of(_as_ctr(me))
        members = ray.cluster_nodes(me.host_dir, head) if head else []
        nodes = [
            Node(
                m["host_dir"],
                m["container"],
                m["id"],
                m["ip"],
                _env_of(m["host_dir"], m["container"]),
            )
            for m in members
        ] or [me]
        if len(nodes) < spec.tp:
            specs = [{"GPU": 1.0, f"node:{me.ip}": 0.001}] + [{"GPU": 1.0}] * (spec.tp - 1)
            _log(
                me,
                "INFO",
                "ray_utils.py:339",
                f"Waiting for creating a placement group of specs "
                f"for 10 seconds. specs={specs}. Check `ray status` and `ray list nodes` to see if "
                "you have enough resources, and make sure the IP addresses used by ray cluster are "
                "the same as VLLM_HOST_IP environment variable specified in each node if you are "
                "running on a multi-node.",
            )
            procs.wait_while_running(
                me.host_dir, me.id, float(state["rates"]["placement_timeout_s"])
            )
            raise EngineError(
                f"ValueError: Cannot provide a placement group of placement_group_specs={specs} "
                "within 1800 seconds. See `ray status` and `ray list nodes` to make sure the "
                f"cluster has enough resources. (Ray cluster has {len(nodes)} node(s) with "
                f"{len(nodes)} GPU(s); tensor_parallel_size={spec.tp} needs {spec.tp}.)"
            )
        return nodes[: spec.tp]
    raise EngineError(
        f"ValueError: World size ({spec.tp}) is larger than the number of available GPUs (1) in "
        "this node. If this is intentional and you are using:\n- ray, set "
        "'--distributed-executor-backend ray'.\n- multiprocessing, set '--nnodes' appropriately."
    )


def _as_ctr(node: Node) -> Container:
    from .incontainer import Container

    return Container(node.host_dir, node.container, node.id, node.env)


def _env_of(host_dir: Path, name: str) -> dict[str, str]:
    from .incontainer import env_of

    return env_of(read_state(host_dir)["docker"]["containers"][name], [])


def _wait_for_ranks(spec: ServeSpec, me: Node, state: dict[str, Any]) -> list[Node]:
    deadline = time.monotonic() + float(state["rates"]["placement_timeout_s"])
    while True:
        ranks = _ready_ranks(spec, me.host_dir)
        if len(ranks) >= spec.nnodes - 1 or time.monotonic() >= deadline:
            break
        time.sleep(procs.POLL_S)
    if len(ranks) < spec.nnodes - 1:
        raise EngineError(
            f"torch.distributed.DistStoreError: Timed out after 601 seconds waiting for clients. "
            f"{len(ranks) + 1}/{spec.nnodes} clients joined. (master {spec.master or me.ip}; "
            "start the other ranks with the same --master-addr and check they can reach it.)"
        )
    return ranks[: spec.nnodes - 1]


def _ready_ranks(spec: ServeSpec, host_dir: Path) -> list[Node]:
    found = []
    for path, state in fabric.hosts(host_dir):
        for name, c in state["docker"]["containers"].items():
            s = c.get("serve") or {}
            if (
                c["state"] == "running"
                and s.get("role") == "rank"
                and s.get("master") == spec.master
            ):
                found.append(Node(path, name, c["id"], s["ip"], _env_of(path, name)))
    return found


def _run_rank(spec: ServeSpec, me: Node) -> int:
    """A headless rank: check this node, wait for the master to be reachable, then stay up."""
    state = read_state(me.host_dir)
    _check_node(spec, me, remote=False)
    if not fabric.reachable(state, me.host_dir, spec.master):
        procs.wait_while_running(me.host_dir, me.id, float(state["rates"]["join_timeout_s"]))
        raise EngineError(
            f"torch.distributed.DistNetworkError: The client socket has timed out after 600000ms "
            f"while trying to connect to ({spec.master}, 29501)."
        )
    with locked_state(me.host_dir) as changed:
        c = changed["docker"]["containers"][me.container]
        c["serve"] = {"role": "rank", "rank": spec.rank, "master": spec.master, "ip": me.ip}
    _log(
        me,
        "INFO",
        "api_server.py:1102",
        f"Headless mode: rank {spec.rank} of {spec.nnodes}, "
        f"engine cores connect to master {spec.master}",
    )
    procs.wait_while_running(me.host_dir, me.id)
    return 0


def _check_node(spec: ServeSpec, node: Node, remote: bool) -> None:
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
    if mem["MemAvailable"] < wanted:
        raise EngineError(
            f"{prefix}ValueError: Free memory on device ({mem['MemAvailable'] / _GIB_KB:.2f}/"
            f"{total_gib:.2f} GiB) on startup is less than desired GPU memory utilization "
            f"({spec.util}, {wanted / _GIB_KB:.2f} GiB). Decrease GPU memory utilization or "
            "reduce GPU memory used by other processes."
        )
    weights_kb = state["hf_cache"][spec.model]["size_gb"] * 1e9 / 1024 / max(spec.tp, 1)
    if weights_kb > wanted * 0.95:
        raise EngineError(
            f"{prefix}torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 1.50 GiB. "
            f"GPU 0 has a total capacity of {total_gib:.2f} GiB of which "
            f"{wanted / _GIB_KB * 0.02:.2f} GiB is free. Model weights need "
            f"{weights_kb / _GIB_KB:.1f} GiB per GPU but the budget "
            f"at gpu_memory_utilization={spec.util} is {wanted / _GIB_KB:.1f} GiB."
        )
    if spec.tp > 1:
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


def _transport(nodes: list[Node]) -> str:
    if len(nodes) == 1:
        return "local"
    for node in nodes:
        state = read_state(node.host_dir)
        container = state["docker"]["containers"][node.container]
        if not fabric.usable_rdma(node.env, container, state):
            return "socket"
    return "roce"


def _announce(spec: ServeSpec, nodes: list[Node], transport: str, state: dict[str, Any]) -> None:
    for rank, node in enumerate(nodes):
        node_state = read_state(node.host_dir)
        debug = node.env.get("NCCL_DEBUG", "").upper() in ("INFO", "TRACE")
        if transport == "local" or not debug:
            continue
        tag = f"{node_state['hostname']}:{4300 + rank}:{4300 + rank} [0]"
        oob = fabric.oob_interface(node.env, node_state, node.ip)
        container = node_state["docker"]["containers"][node.container]
        if transport == "roce":
            devs = fabric.usable_rdma(node.env, container, node_state)
            using = " ".join(f"[{i}]{nic['rdma_dev']}:1/RoCE" for i, (_n, nic) in enumerate(devs))
            print(f"{tag} NCCL INFO NET/IB : Using {using} [RO]; OOB {oob}:{node.ip}<0>")
            print(f"{tag} NCCL INFO Using network IB")
        else:
            print(f"{tag} NCCL INFO NET/IB : No device found.")
            print(f"{tag} NCCL INFO NET/Socket : Using [0]{oob}:{node.ip}<0>")
            print(f"{tag} NCCL INFO Using network Socket")
    per_node = state["hf_cache"][spec.model]["size_gb"] / len(nodes) / 1.0737
    took = engine_log.load_weights(spec.model, per_node, state, nodes[0].host_dir)
    _log_all(spec, per_node, took)


def _log_all(spec: ServeSpec, per_node_gib: float, took_s: float) -> None:
    lines = [
        (
            "gpu_model_runner.py:2338",
            f"Model loading took {per_node_gib:.1f} GiB memory and {took_s:.1f} seconds",
        ),
        ("kv_cache_utils.py:1087", "GPU KV cache size: 1,412,608 tokens"),
        (
            "kv_cache_utils.py:1091",
            f"Maximum concurrency for {spec.max_model_len:,} tokens per request: 5.39x",
        ),
        ("api_server.py:1820", f"Starting vLLM API server 0 on http://{spec.host}:{spec.port}"),
        (
            "launcher.py:29",
            "Available routes are: /health, /v1/models, /v1/completions, /v1/chat/completions",
        ),
    ]
    for where, text in lines:
        _log_line(where, text)
    print("INFO:     Started server process [1]\nINFO:     Waiting for application startup.")
    print("INFO:     Application startup complete.")
    print(
        f"INFO:     Uvicorn running on http://{spec.host}:{spec.port} (Press CTRL+C to quit)",
        flush=True,
    )
    if spec.kind == "sglang":
        engine_log.fired_up()


def _log_line(where: str, text: str) -> None:
    print(f"INFO {time.strftime('%m-%d %H:%M:%S')} [{where}] {text}", flush=True)


def _record(spec: ServeSpec, nodes: list[Node], transport: str, ctr: Container) -> None:
    state = read_state(ctr.host_dir)
    rates = state["rates"]
    tok_s = rates["socket_tok_s"] if transport == "socket" else rates["roce_tok_s"]
    head = ray.head_of(ctr) if spec.kind == "vllm" else None
    for rank, node in enumerate(nodes):
        with locked_state(node.host_dir) as changed:
            c = changed["docker"]["containers"][node.container]
            c["memory_kb"] = int(spec.util * memory_kb(changed)["MemTotal"])
            name = "VLLM::EngineCore" if rank == 0 else "ray::RayWorkerWrapper"
            mib = c["memory_kb"] // 1024
            c["gpu_process"] = {"pid": 52000 + rank, "type": "C", "name": name, "memory_mib": mib}
            if node is nodes[0]:
                c["listen"] = sorted({*c.get("listen", []), spec.port})
                c["serve"] = {
                    "role": "api",
                    "kind": spec.kind,
                    "model": spec.model,
                    "served_name": spec.served_name or spec.model,
                    "port": spec.port,
                    "tp": spec.tp,
                    "transport": transport,
                    "tok_s": tok_s,
                    "ttft_s": rates["ttft_s"],
                    "max_model_len": spec.max_model_len,
                    "nodes": [n.ip for n in nodes],
                    "ray_head": head,
                    "pid": os.getpid(),
                }
