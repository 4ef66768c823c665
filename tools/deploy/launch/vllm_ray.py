"""vLLM with Ray in Docker across N nodes: the NVIDIA two-Spark playbook, step by step.

Head container and Ray head first, then each worker's container joins the Ray cluster, then
`vllm serve` on the head with the Ray executor. Every node pins Ray and vLLM to its fabric IP
(a multi-NIC host otherwise advertises its LAN address and placement waits forever).

Where the image has no Ray (NGC `nvcr.io/nvidia/vllm:26.05-py3`), it is installed into each
container before `ray start`, as the playbook's patched run_cluster.sh does: `pip install -q
--root-user-action=ignore 'ray[default]>=2.9'` (docs/sources.md §2.3, §6 #13).
"""

from __future__ import annotations

from tools.deploy.choices import DeployChoices
from tools.deploy.fabric.env import rdma_env, socket_env
from tools.deploy.fabric.paths import FabricPath
from tools.deploy.launch.parts import (
    PREFLIGHT_COMMON,
    Recipe,
    container_step,
    engine_flags,
    own_flags,
    parallel_flags,
    serve_step,
    split_label,
)
from tools.deploy.steps import DeployStep, StepCheck


def node_env(path: FabricPath, head: FabricPath) -> dict[str, str]:
    ip = path.ip_or_lookup()
    return {
        **socket_env(path),
        **rdma_env(path),
        "VLLM_HOST_IP": ip,
        "RAY_NODE_IP_ADDRESS": ip,
        "MASTER_ADDR": head.ip_or_lookup(),
    }


def _ray_status(choices: DeployChoices, head: str, nodes: int) -> StepCheck:
    gpus = nodes * choices.gpus_per_node
    return StepCheck(
        host=head,
        command=f"docker exec {choices.container} ray status",
        expect=rf"/{gpus}\.0 GPU",
        description=f"ray status shows {nodes} node(s) and {gpus}.0 GPU",
    )


RAY_INSTALL = "pip install -q --root-user-action=ignore 'ray[default]>=2.9'"


def install_ray_step(choices: DeployChoices, host: str) -> DeployStep:
    c = choices.container
    return DeployStep(
        kind="ray-install",
        id=f"ray-install:{host}",
        title=f"install Ray into {c}, as NVIDIA's playbook does for its image without Ray",
        host=host,
        actions=[f"docker exec {c} {RAY_INSTALL}"],
        check=StepCheck(
            host=host,
            command=f"docker exec {c} ray --version",
            expect=r"ray, version",
            description="ray --version answers in the container",
        ),
        rollback=f"docker rm -f {c}",
        needs=[f"container:{host}"],
    )


def build(
    choices: DeployChoices,
    fabric: dict[str, FabricPath],
    install_ray: frozenset[str] = frozenset(),
) -> Recipe:
    """The steps; `install_ray` names the nodes whose image lacks Ray (or may lack it)."""
    head = fabric[choices.head]
    c = choices.container

    def ray_ready(host: str) -> list[str]:
        return [f"ray-install:{host}" if host in install_ray else f"container:{host}"]

    steps = [container_step(choices, choices.head, node_env(head, head), [])]
    if choices.head in install_ray:
        steps.append(install_ray_step(choices, choices.head))
    steps.append(
        DeployStep(
            kind="ray-head",
            id=f"ray-head:{choices.head}",
            title="start the Ray head",
            host=choices.head,
            actions=[
                f"docker exec {c} ray start --head --port {choices.ray_port} "
                f"--node-ip-address {head.ip_or_lookup()} --disable-usage-stats"
            ],
            check=_ray_status(choices, choices.head, 1),
            rollback=f"docker exec {c} ray stop",
            needs=ray_ready(choices.head),
        )
    )
    for joined, worker in enumerate(choices.workers, start=2):
        path = fabric[worker]
        steps.append(container_step(choices, worker, node_env(path, head), []))
        if worker in install_ray:
            steps.append(install_ray_step(choices, worker))
        steps.append(
            DeployStep(
                kind="ray-join",
                id=f"ray-join:{worker}",
                title="join the Ray cluster",
                host=worker,
                actions=[
                    f"docker exec {c} ray start --address={head.ip_or_lookup()}:{choices.ray_port} "
                    f"--node-ip-address {path.ip_or_lookup()}"
                ],
                check=_ray_status(choices, choices.head, joined),
                rollback=f"docker exec {c} ray stop",
                needs=[*ray_ready(worker), f"ray-head:{choices.head}"],
            )
        )
    serve = " ".join(
        [
            f"docker exec {c} vllm serve {choices.model}",
            *parallel_flags(choices),
            *own_flags(choices),
            f"--host 0.0.0.0 --port {choices.port}",
            *engine_flags(choices, vllm=True),
        ]
    )
    steps.append(
        serve_step(
            choices,
            f"serve {choices.model} with vLLM {split_label(choices)}",
            serve,
            [s.id for s in steps if s.kind in ("ray-head", "ray-join")],
        )
    )
    return Recipe(
        name="vllm-ray",
        steps=steps,
        preflight=PREFLIGHT_COMMON,
        head=choices.head,
        port=choices.port or 8000,
        ports={choices.head: [choices.port or 8000, choices.ray_port]},
    )
