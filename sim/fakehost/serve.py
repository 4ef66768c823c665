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
from typing import TYPE_CHECKING, Any

from . import bench_serve, engine_log, fabric, procs, ray, served
from .memory import memory_kb
from .serve_checks import check_node, check_port, nccl_transport
from .serve_defects import fail_or_stall, generation_defects
from .serve_nodes import gather_nodes, run_rank
from .serve_spec import EngineError, Node, ServeSpec, log, node_ip, options
from .state import locked_state, read_state
from .vllm_args import unrecognized, usage_error, version_of

if TYPE_CHECKING:
    from .container import Container


def run_vllm(args: list[str], ctr: Container) -> int:
    if args[:1] == ["bench"]:
        return bench_serve.run_bench(args[1:], ctr)
    if args[:1] != ["serve"]:
        sys.stderr.write(
            "usage: vllm [-h] [-v] {chat,complete,serve,bench,collect-env,run-batch}\n"
        )
        return 2
    version = ctr.packages().get("vllm", "")
    if unknown := unrecognized(args[1:], version):
        sys.stderr.write(usage_error(unknown))
        return 2
    positional, o = options(args[1:])
    model = positional[0] if positional else o.get("--model", "")
    spec = ServeSpec(
        kind="vllm",
        model=model,
        tp=int(o.get("--tensor-parallel-size", o.get("-tp", "1"))),
        pp=int(o.get("--pipeline-parallel-size", o.get("-pp", "1"))),
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
        tool_parser=o.get("--tool-call-parser", "") if "--enable-auto-tool-choice" in o else "",
    )
    return _serve(spec, ctr, ".".join(map(str, version_of(version))))


def run_sglang(args: list[str], ctr: Container) -> int:
    _positional, o = options(args)
    model = o.get("--model-path", o.get("--model", ""))
    rank = int(o.get("--node-rank", "0"))
    spec = ServeSpec(
        kind="sglang",
        model=model,
        tp=int(o.get("--tp", o.get("--tp-size", "1"))),
        pp=int(o.get("--pp-size", o.get("--pipeline-parallel-size", "1"))),
        port=int(o.get("--port", "30000")),
        host=o.get("--host", "127.0.0.1"),
        util=float(o.get("--mem-fraction-static", "0.88")),
        nnodes=int(o.get("--nnodes", "1")),
        rank=rank,
        master=o.get("--dist-init-addr", "").rpartition(":")[0],
        headless=rank > 0,
        served_name=o.get("--served-model-name", model),
        max_model_len=int(o.get("--context-length", "262144")),
        tool_parser=o.get("--tool-call-parser", ""),
    )
    return _serve(spec, ctr)


def _serve(spec: ServeSpec, ctr: Container, version: str = "") -> int:
    if not spec.model:
        sys.stderr.write("error: the following arguments are required: model_tag\n")
        return 2
    state = read_state(ctr.host_dir)
    me = Node(ctr.host_dir, ctr.name, ctr.id, node_ip(ctr.env, state), ctr.env)
    if spec.kind == "vllm":
        engine_log.banner(version, spec.model)
        log(ctr, "INFO", "api_server.py:1885", f"vLLM API server version {version}")
        log(
            ctr,
            "INFO",
            "utils.py:326",
            f"non-default args: {{'model': '{spec.model}', "
            f"'tensor_parallel_size': {spec.tp}, "
            + (f"'pipeline_parallel_size': {spec.pp}, " if spec.pp > 1 else "")
            + f"'gpu_memory_utilization': {spec.util}}}",
        )
    else:
        log(
            ctr,
            "INFO",
            "server_args.py:612",
            f"model_path='{spec.model}', tp_size={spec.tp}, pp_size={spec.pp}, "
            f"nnodes={spec.nnodes}, node_rank={spec.rank}, mem_fraction_static={spec.util}",
        )
    try:
        if spec.nnodes > 1 and spec.headless:
            return run_rank(spec, me)
        check_port(spec, ctr)
        nodes = gather_nodes(spec, me)
        for node in nodes:
            check_node(spec, node, len(nodes), remote=node is not me)
        transport = nccl_transport(nodes)
    except EngineError as exc:
        sys.stderr.write(f"{exc}\n")
        sys.stdout.flush()
        return 1
    defective = fail_or_stall(spec, ctr)
    if defective is not None:
        return defective
    per_node_gib, took_s = _load(spec, nodes, transport, state)
    _record(spec, nodes, transport, ctr)
    # uvicorn says it runs only once it listens: wait until the simulator serves the port (it
    # starts a server for the record just written) before saying so, or a client that acts on
    # the log line finds nothing there yet.
    served.wait_served(nodes[0].host_dir, spec.port)
    _log_all(spec, per_node_gib, took_s)
    procs.wait_while_running(ctr.host_dir, ctr.id)
    return 0


def _load(
    spec: ServeSpec, nodes: list[Node], transport: str, state: dict[str, Any]
) -> tuple[float, float]:
    """NCCL's transport lines and the weights' load; (GiB per node, seconds it took)."""
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
    return per_node, engine_log.load_weights(spec.model, per_node, state, nodes[0].host_dir)


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
                    "world": spec.world,
                    "transport": transport,
                    "tok_s": tok_s,
                    "ttft_s": rates["ttft_s"],
                    "max_model_len": spec.max_model_len,
                    "tool_parser": spec.tool_parser,
                    "generation": {**state.get("generation", {}), **generation_defects(ctr)},
                    "nodes": [n.ip for n in nodes],
                    "ray_head": head,
                    "pid": os.getpid(),
                }
