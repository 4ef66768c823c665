"""SGLang across N nodes: the same launch on every node with its rank and one rendezvous address
(`--tp` counts GPUs over all nodes, `--pp-size` the pipeline stages; docs/sources.md §5).

Each container sets SGLANG_HOST_IP to its own fabric IP: without it SGLang advertises an
auto-detected address (on a Spark, often Wi-Fi) and two-node start-up hangs after
"CustomAllreduce is disabled".
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
        "SGLANG_HOST_IP": path.ip_or_lookup(),
    }


def launch_command(choices: DeployChoices, head: FabricPath, rank: int) -> str:
    parts = [
        f"docker exec {choices.container} python3 -m sglang.launch_server",
        f"--model-path {choices.model}",
        *parallel_flags(choices),
    ]
    if len(choices.hosts) > 1:
        parts += [
            f"--nnodes {len(choices.hosts)} --node-rank {rank}",
            f"--dist-init-addr {head.ip_or_lookup()}:{choices.dist_port}",
        ]
    return " ".join(
        [
            *parts,
            f"--host 0.0.0.0 --port {choices.port}",
            *engine_flags(choices, vllm=False),
            *own_flags(choices),
        ]
    )


SGLANG = RankedLaunch(
    name="sglang",
    engine="SGLang",
    env=node_env,
    launch=launch_command,
    default_port=30000,
    default_dist_port=20000,
)


def build(choices: DeployChoices, fabric: dict[str, FabricPath]) -> Recipe:
    return ranked_recipe(SGLANG, choices, fabric)
