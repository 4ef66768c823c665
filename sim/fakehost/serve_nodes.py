"""Which nodes serve a model: the Ray cluster's placement group (vLLM `--distributed-executor-
backend ray`), or the ranks started with `--nnodes`/`--node-rank` (vLLM mp, SGLang); a headless
rank checks its node, waits for the master and stays up."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

from . import fabric, procs, ray
from .container import Container, env_of
from .serve_checks import check_node
from .serve_spec import EngineError, Node, ServeSpec, log
from .state import locked_state, read_state


def gather_nodes(spec: ServeSpec, me: Node) -> list[Node]:
    state = read_state(me.host_dir)
    if spec.nnodes > 1:
        return [me, *_wait_for_ranks(spec, me, state)]
    if spec.tp <= 1:
        return [me]
    if spec.kind == "vllm" and (spec.backend == "ray" or ray.head_of(as_container(me))):
        head = ray.head_of(as_container(me))
        members = ray.cluster_nodes(me.host_dir, head) if head else []
        nodes = [
            Node(
                m["host_dir"],
                m["container"],
                m["id"],
                m["ip"],
                container_env(m["host_dir"], m["container"]),
            )
            for m in members
        ] or [me]
        if len(nodes) < spec.tp:
            specs = [{"GPU": 1.0, f"node:{me.ip}": 0.001}] + [{"GPU": 1.0}] * (spec.tp - 1)
            log(
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


def as_container(node: Node) -> Container:
    return Container(node.host_dir, node.container, node.id, node.env)


def container_env(host_dir: Path, name: str) -> dict[str, str]:
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
                found.append(Node(path, name, c["id"], s["ip"], container_env(path, name)))
    return found


def run_rank(spec: ServeSpec, me: Node) -> int:
    """A headless rank: check this node, wait for the master to be reachable, then stay up."""
    state = read_state(me.host_dir)
    check_node(spec, me, remote=False)
    if not fabric.reachable(state, me.host_dir, spec.master):
        procs.wait_while_running(me.host_dir, me.id, float(state["rates"]["join_timeout_s"]))
        raise EngineError(
            f"torch.distributed.DistNetworkError: The client socket has timed out after 600000ms "
            f"while trying to connect to ({spec.master}, 29501)."
        )
    with locked_state(me.host_dir) as changed:
        c = changed["docker"]["containers"][me.container]
        c["serve"] = {"role": "rank", "rank": spec.rank, "master": spec.master, "ip": me.ip}
    log(
        me,
        "INFO",
        "api_server.py:1102",
        f"Headless mode: rank {spec.rank} of {spec.nnodes}, "
        f"engine cores connect to master {spec.master}",
    )
    procs.wait_while_running(me.host_dir, me.id)
    return 0
