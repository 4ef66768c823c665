"""`ray start/status/stop` inside an engine container, with the cluster kept in container state.

A head records `ray: {role: head, ip, port}`; a worker joins only if it can reach the head's
address over a link that is up and a running head container holds that address. Otherwise it
waits (bounded by the scenario's `join_timeout_s`) and fails the way Ray does. `ray status`
counts each node's GPUs (8 on an H100 node, as Ray detects them), one on a Spark
(shared/fixtures/recon/spark_ray_status_2nodes.txt: `0.0/2.0 GPU` for two).
"""

from __future__ import annotations

import hashlib
import sys
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from . import fabric, procs
from .state import locked_state, read_state

if TYPE_CHECKING:
    from .container import Container

NODE_CPUS, NODE_MEM_GIB, NODE_STORE_GIB = 20, 109.415, 9.73


def _flag(args: list[str], name: str) -> str | None:
    for i, arg in enumerate(args):
        if arg == name and i + 1 < len(args):
            return args[i + 1]
        if arg.startswith(name + "="):
            return arg.split("=", 1)[1].strip("'\"")
    return None


def _set_ray(ctr: Container, record: dict[str, Any] | None) -> None:
    with locked_state(ctr.host_dir) as state:
        container = state["docker"]["containers"].get(ctr.name)
        if container:
            container["ray"] = record


def node_id(ip: str, container_id: str) -> str:
    return hashlib.sha224(f"{ip}{container_id}".encode()).hexdigest()


def cluster_nodes(host_dir: Path, head: str) -> list[dict[str, Any]]:
    """Ray nodes of the cluster whose head is `head` (ip:port): head first, then workers."""
    found = []
    for path, state in fabric.hosts(host_dir):
        for name, c in state["docker"]["containers"].items():
            r = c.get("ray")
            if c["state"] != "running" or not r:
                continue
            mine = (r["role"] == "head" and f"{r['ip']}:{r['port']}" == head) or r.get(
                "head"
            ) == head
            if mine:
                found.append({**r, "host_dir": path, "container": name, "id": c["id"]})
    return sorted(found, key=lambda n: n["role"] != "head")


def head_of(ctr: Container) -> str | None:
    """The head address (ip:port) of the Ray cluster this container belongs to, if it is alive."""
    r = ctr.record().get("ray")
    if not r:
        return None
    head = f"{r['ip']}:{r['port']}" if r["role"] == "head" else r["head"]
    nodes = cluster_nodes(ctr.host_dir, head)
    return head if nodes and nodes[0]["role"] == "head" else None


def run_ray(args: list[str], ctr: Container) -> int:
    verb = args[0] if args else ""
    if verb == "start":
        return _start(args[1:], ctr)
    if verb == "status":
        return _status(ctr)
    if verb == "stop":
        _set_ray(ctr, None)
        print("Stopped all 7 Ray processes.")
        return 0
    sys.stderr.write(f"Usage: ray [OPTIONS] COMMAND [ARGS]...\nError: No such command '{verb}'.\n")
    return 2


def _start(args: list[str], ctr: Container) -> int:
    state = read_state(ctr.host_dir)
    if ctr.record().get("ray"):
        sys.stderr.write(
            "ConnectionError: Ray is trying to start at this node, but is already running. "
            "Run `ray stop` first.\n"
        )
        return 1
    ip = (
        _flag(args, "--node-ip-address")
        or ctr.env.get("RAY_OVERRIDE_NODE_IP_ADDRESS")
        or ctr.env.get("VLLM_HOST_IP")
        or fabric.primary_ip(state)
    )
    print("Usage stats collection is disabled.\n")
    if "--head" in args:
        port = int(_flag(args, "--port") or 6379)
        _set_ray(ctr, {"role": "head", "ip": ip, "port": port, "node_id": node_id(ip, ctr.id)})
        print(
            f"Local node IP: {ip}\n\n--------------------\nRay runtime started.\n"
            "--------------------\n\nNext steps\n  To add another node to this Ray cluster, run\n"
            f"    ray start --address='{ip}:{port}'\n"
        )
    else:
        address = _flag(args, "--address") or ""
        if not _joinable(ctr, state, address):
            rates = state.get("rates", {})
            print(f"Local node IP: {ip}", flush=True)
            procs.wait_while_running(ctr.host_dir, ctr.id, rates.get("join_timeout_s", 2.0))
            stamp = datetime.now().strftime("%Y-%m-%d %H:%M:%S,%f")[:-3]
            sys.stderr.write(
                f"[{stamp} W {ctr.id[:5]}] gcs_rpc_client.h:151: Failed to connect to GCS at "
                f"address {address} within 5 seconds.\n"
                f"ConnectionError: Unable to connect to GCS (ray head) at {address}. Check that "
                "(1) Ray with matching version started successfully at the specified address, "
                "(2) this node can reach the specified address, and (3) there is no firewall "
                "setting preventing access.\n"
            )
            return 1
        rec = {"role": "worker", "ip": ip, "head": address, "node_id": node_id(ip, ctr.id)}
        _set_ray(ctr, rec)
        print(
            f"Local node IP: {ip}\n\n--------------------\nRay runtime started.\n"
            "--------------------\n\nTo terminate the Ray runtime, run\n  ray stop"
        )
    if "--block" in args:
        print(
            "--block\n  This command will now block forever until terminated by a signal.\n"
            "  Running subprocesses are monitored and a message will be printed if any of them "
            "terminate unexpectedly. Subprocesses exit with SIGTERM will be treated as graceful, "
            "thus NOT reported.",
            flush=True,
        )
        procs.wait_while_running(ctr.host_dir, ctr.id)
    return 0


def _joinable(ctr: Container, state: dict[str, Any], address: str) -> bool:
    head_ip = address.rpartition(":")[0]
    if not head_ip or not fabric.reachable(state, ctr.host_dir, head_ip):
        return False
    nodes = cluster_nodes(ctr.host_dir, address)
    return bool(nodes) and nodes[0]["role"] == "head"


def _status(ctr: Container) -> int:
    head = head_of(ctr)
    if head is None:
        sys.stderr.write(
            "ConnectionError: Could not find any running Ray instance. Please specify the one to "
            "connect to by setting `--address` flag or `RAY_ADDRESS` environment variable.\n"
        )
        return 1
    nodes = cluster_nodes(ctr.host_dir, head)
    used_gpu = _gpus_in_use(ctr.host_dir, head)
    gpus = sum(read_state(node["host_dir"])["gpu"]["count"] for node in nodes)
    n = len(nodes)
    active = "\n".join(f" 1 node_{node['node_id']}" for node in nodes)
    print(f"======== Autoscaler status: {datetime.now().isoformat(sep=' ')} ========")
    print("Node status\n" + "-" * 63 + f"\nActive:\n{active}\nPending:\n (no pending nodes)")
    print("Recent failures:\n (no failures)\n\nResources\n" + "-" * 63 + "\nTotal Usage:")
    # GPUs a vLLM server holds are its placement group's bundles, used of reserved
    # (tests/fixtures/jobs/ray_status_2nodes_16gpu_all_reserved_in_placement_groups.txt)
    held = (
        f" ({used_gpu:.1f} used of {used_gpu:.1f} reserved in placement groups)" if used_gpu else ""
    )
    print(f" 0.0/{NODE_CPUS * n:.1f} CPU\n {used_gpu:.1f}/{float(gpus):.1f} GPU{held}")
    print(
        f" 0B/{NODE_MEM_GIB * n:.2f}GiB memory\n 0B/{NODE_STORE_GIB * n:.2f}GiB "
        "object_store_memory\n"
    )
    print("From request_resources:\n (none)\nPending Demands:\n (no resource demands)")
    return 0


def _gpus_in_use(host_dir: Path, head: str) -> float:
    """GPUs held by a Ray-backed server of this cluster: its TP × PP world."""
    for _path, state in fabric.hosts(host_dir):
        for c in state["docker"]["containers"].values():
            s = c.get("serve")
            if c["state"] == "running" and s and s.get("ray_head") == head:
                return float(s.get("world", len(s["nodes"])))
    return 0.0
