"""vLLM across N nodes without Ray: torch distributed with `--nnodes/--node-rank/--master-addr`.

Workers start first, headless (they serve no HTTP); the head (rank 0) starts last and serves.
"""

from __future__ import annotations

from tools.deploy.choices import DeployChoices
from tools.deploy.fabric import FabricPath
from tools.deploy.recipe_parts import (
    PREFLIGHT_COMMON,
    Recipe,
    container_step,
    engine_flags,
    rdma_env,
    serving_check,
    socket_env,
)
from tools.deploy.steps import DeployStep, StepCheck


def node_env(path: FabricPath, head: FabricPath) -> dict[str, str]:
    return {
        **socket_env(path),
        **rdma_env(path),
        "VLLM_HOST_IP": path.ip_or_lookup(),
        "MASTER_ADDR": head.ip_or_lookup(),
        "HF_HUB_OFFLINE": "1",
    }


def serve_command(choices: DeployChoices, head: FabricPath, rank: int) -> str:
    parts = [
        f"docker exec -d {choices.container} vllm serve {choices.model}",
        f"--tensor-parallel-size {choices.tensor_parallel}",
        "--distributed-executor-backend mp",
        f"--nnodes {len(choices.hosts)} --node-rank {rank}",
        f"--master-addr {head.ip_or_lookup()} --master-port {choices.dist_port}",
        *engine_flags(choices, vllm=True),
    ]
    parts.append("--headless" if rank else f"--host 0.0.0.0 --port {choices.port}")
    return " ".join(parts)


def build(choices: DeployChoices, fabric: dict[str, FabricPath]) -> Recipe:
    head = fabric[choices.head]
    c = choices.container
    steps: list[DeployStep] = []
    for rank, worker in enumerate(choices.workers, start=1):
        steps.append(container_step(choices, worker, node_env(fabric[worker], head), []))
        steps.append(
            DeployStep(
                id=f"rank:{worker}",
                title=f"start vLLM rank {rank} (headless)",
                host=worker,
                actions=[serve_command(choices, head, rank)],
                check=StepCheck(
                    host=worker,
                    command=f"docker logs {c}",
                    expect=r"Traceback|Error",
                    absent=True,
                    description="the rank's log shows no error (it waits for rank 0)",
                ),
                rollback=f"docker rm -f {c}",
                needs=[f"container:{worker}"],
            )
        )
    ranks = [s.id for s in steps if s.id.startswith("rank:")]
    steps.append(container_step(choices, choices.head, node_env(head, head), ranks))
    steps.append(
        DeployStep(
            id=f"serve:{choices.head}",
            title=f"serve {choices.model} as rank 0",
            host=choices.head,
            actions=[serve_command(choices, head, 0)],
            check=serving_check(choices, choices.head),
            rollback=f"docker rm -f {c} on every node",
            needs=[f"container:{choices.head}", *ranks],
        )
    )
    return Recipe(
        name="vllm-multinode",
        steps=steps,
        preflight=PREFLIGHT_COMMON,
        head=choices.head,
        port=choices.port or 8000,
        ports={choices.head: [choices.port or 8000, choices.dist_port or 29501]},
    )
