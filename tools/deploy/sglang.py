"""SGLang across N nodes: the same launch on every node with its rank and one rendezvous address.

Each container sets SGLANG_HOST_IP to its own fabric IP: without it SGLang advertises an
auto-detected address (on a Spark, often Wi-Fi) and two-node start-up hangs after
"CustomAllreduce is disabled".
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


def node_env(path: FabricPath) -> dict[str, str]:
    return {
        **socket_env(path),
        **rdma_env(path),
        "SGLANG_HOST_IP": path.ip_or_lookup(),
        "HF_HUB_OFFLINE": "1",
    }


def launch_command(choices: DeployChoices, head: FabricPath, rank: int) -> str:
    return " ".join(
        [
            f"docker exec -d {choices.container} python3 -m sglang.launch_server",
            f"--model-path {choices.model}",
            f"--tp {choices.tensor_parallel} --nnodes {len(choices.hosts)} --node-rank {rank}",
            f"--dist-init-addr {head.ip_or_lookup()}:{choices.dist_port}",
            f"--host 0.0.0.0 --port {choices.port}",
            *engine_flags(choices, vllm=False),
            "--trust-remote-code",
        ]
    )


def build(choices: DeployChoices, fabric: dict[str, FabricPath]) -> Recipe:
    head = fabric[choices.head]
    c = choices.container
    steps: list[DeployStep] = []
    for rank, worker in enumerate(choices.workers, start=1):
        steps.append(container_step(choices, worker, node_env(fabric[worker]), []))
        steps.append(
            DeployStep(
                id=f"rank:{worker}",
                title=f"start SGLang rank {rank}",
                host=worker,
                actions=[launch_command(choices, head, rank)],
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
    steps.append(container_step(choices, choices.head, node_env(head), []))
    steps.append(
        DeployStep(
            id=f"serve:{choices.head}",
            title=f"serve {choices.model} with SGLang rank 0",
            host=choices.head,
            actions=[launch_command(choices, head, 0)],
            check=serving_check(choices, choices.head),
            rollback=f"docker rm -f {c} on every node",
            needs=[f"container:{choices.head}", *ranks],
        )
    )
    return Recipe(
        name="sglang",
        steps=steps,
        preflight=PREFLIGHT_COMMON,
        head=choices.head,
        port=choices.port or 30000,
        ports={choices.head: [choices.port or 30000, choices.dist_port or 20000]},
    )
