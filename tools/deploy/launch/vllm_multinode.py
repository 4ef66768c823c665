"""vLLM across N nodes without Ray: torch distributed with `--nnodes/--node-rank/--master-addr`
(vLLM's multiprocessing backend across nodes, docs/sources.md §4), TP × PP as laid out.

Workers start first, headless (they serve no HTTP); the head (rank 0) starts last and serves.
"""

from __future__ import annotations

from tools.deploy.choices import DeployChoices
from tools.deploy.fabric.env import rdma_env, socket_env
from tools.deploy.fabric.paths import FabricPath
from tools.deploy.launch.parts import (
    RankedLaunch,
    Recipe,
    engine_flags,
    own_flags,
    parallel_flags,
    ranked_recipe,
)


def node_env(path: FabricPath, head: FabricPath) -> dict[str, str]:
    return {
        **socket_env(path),
        **rdma_env(path),
        "VLLM_HOST_IP": path.ip_or_lookup(),
        "MASTER_ADDR": head.ip_or_lookup(),
    }


def serve_command(choices: DeployChoices, head: FabricPath, rank: int) -> str:
    parts = [
        f"docker exec {choices.container} vllm serve {choices.model}",
        *parallel_flags(choices),
        *own_flags(choices),
    ]
    if len(choices.hosts) > 1:
        parts += [
            f"--nnodes {len(choices.hosts)} --node-rank {rank}",
            f"--master-addr {head.ip_or_lookup()} --master-port {choices.dist_port}",
        ]
    parts += engine_flags(choices, vllm=True)
    parts.append("--headless" if rank else f"--host 0.0.0.0 --port {choices.port}")
    return " ".join(parts)


VLLM_MULTINODE = RankedLaunch(
    name="vllm-multinode",
    engine="vLLM",
    env=node_env,
    launch=serve_command,
    default_port=8000,
    default_dist_port=29501,
)


def build(choices: DeployChoices, fabric: dict[str, FabricPath]) -> Recipe:
    return ranked_recipe(VLLM_MULTINODE, choices, fabric)
