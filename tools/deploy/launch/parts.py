"""The parts every recipe is built from: engine env, `docker run`, container and serving checks.

Every recipe runs its engine in one long-lived container per node (`sleep infinity` as the main
process), then starts the engine parts with `docker exec`, so each part has its own success
check and a failed part can be retried without re-creating containers. The engine's own
processes (`vllm serve`, a rank, SGLang) run as jobs (`docker exec` in the foreground as the
job's command): their output lands in the job log, where load progress and tracebacks show and
the rank checks read; `docker exec -d` would write nowhere (`docker logs` shows only PID 1).
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Callable
from dataclasses import dataclass, field

from tools.deploy.choices import PIPELINE_FLAGS, DeployChoices
from tools.deploy.fabric.paths import FabricPath
from tools.deploy.recipe_book.engines import launch_data
from tools.deploy.steps import DeployStep, StepCheck, job_log_check

CONTAINER_MAIN = "sleep infinity"
PREFLIGHT_COMMON = ("reachable", "fabric", "rdma", "docker", "image", "ports", "memory", "weights")


@dataclass
class Recipe:
    """What a recipe produced: ordered steps, the preflight checks it relies on, where it serves."""

    name: str
    steps: list[DeployStep]
    preflight: tuple[str, ...]
    head: str
    port: int
    ports: dict[str, list[int]] = field(default_factory=dict)


def docker_run(
    choices: DeployChoices, env: dict[str, str], *, command: str = CONTAINER_MAIN
) -> str:
    """`docker run -d` of the engine image with host networking, RDMA and the HF cache."""
    env_flags = " ".join(f"-e {key}={_value(value)}" for key, value in env.items())
    return (
        f"docker run -d --name {choices.container} --network host --ipc host --gpus all "
        f"--shm-size {choices.shm_size} --ulimit memlock=-1 --ulimit stack=67108864 "
        f"--device /dev/infiniband -v {choices.hf_cache}:/root/.cache/huggingface "
        f"{env_flags} {choices.image} {command}"
    )


def _value(value: str) -> str:
    """Quote for the shell, but leave a `$(…)` lookup to be expanded on the host."""
    if value.startswith("$(") and value.endswith(")"):
        return f'"{value}"'
    return shlex.quote(value)


def container_step(
    choices: DeployChoices, host: str, env: dict[str, str], needs: list[str]
) -> DeployStep:
    """The node's engine container, with its fabric env, the launch's own env and the
    recipe's (recipe_book)."""
    name = choices.container
    own = {var.name: var.value for var in launch_data(choices.recipe).env}
    env = {**env, **own, **choices.serve_env}
    return DeployStep(
        kind="container",
        id=f"container:{host}",
        title=f"start the engine container {name}",
        host=host,
        actions=[
            docker_run(choices, env),
            *(write_file(name, text, choices) for name, text in choices.serve_files.items()),
        ],
        check=StepCheck(
            host=host,
            command="docker ps --format '{{.Names}} {{.Status}}'",
            expect=rf"^{name} Up",
            description=f"{name} is Up",
        ),
        rollback=f"docker rm -f {name}",
        needs=needs,
        creates=name,
    )


def write_file(name: str, text: str, choices: DeployChoices) -> str:
    """Write `name` into the container's working directory, where the engine starts and reads
    it by that relative name (as spark-vllm-docker's mods put it in `$WORKSPACE_DIR`)."""
    end = "SCOUT_FILE"
    while end in text.splitlines():
        end += "_"
    body = text[:-1] if text.endswith("\n") else text
    return f"docker exec -i {choices.container} sh -c 'cat > {name}' <<'{end}'\n{body}\n{end}"


SERVE_JOB = "scout-serve"
# vLLM and SGLang both log this when the HTTP server is up (uvicorn); docs/sources.md §2.3.
READY_LINE = "Application startup complete"
FAILED_LINE = r"Traceback|Error|error:"


def rank_job(rank: int) -> str:
    return f"scout-rank-{rank}"


def serve_step(choices: DeployChoices, title: str, command: str, needs: list[str]) -> DeployStep:
    """The engine's rank 0 as a job on the head; ready when its log says the server is up."""
    return DeployStep(
        kind="serve",
        id=f"serve:{choices.head}",
        title=title,
        host=choices.head,
        actions=[command],
        check=serving_check(choices, choices.head),
        rollback=f"docker rm -f {choices.container} on every node",
        needs=needs,
        job=SERVE_JOB,
        ready=f"{READY_LINE}|{FAILED_LINE}",
    )


def serving_check(choices: DeployChoices, host: str) -> StepCheck:
    return StepCheck(
        host=host,
        command=f"curl -sf http://localhost:{choices.port}/v1/models",
        expect=re.escape(choices.model),
        description=f"/v1/models on port {choices.port} lists {choices.model} (loading can take "
        "10–20 minutes; repeat the check until then)",
    )


def parallel_flags(choices: DeployChoices) -> list[str]:
    """The tensor-parallel size, and the pipeline-parallel one when there are stages."""
    tp = "--tp" if choices.recipe == "sglang" else "--tensor-parallel-size"
    flags = [f"{tp} {choices.tensor_parallel}"]
    if choices.pipeline_parallel and choices.pipeline_parallel > 1:
        flags.append(f"{PIPELINE_FLAGS[choices.recipe]} {choices.pipeline_parallel}")
    return flags


def split_label(choices: DeployChoices) -> str:
    """`TP=2`, or `TP=8 × PP=2`."""
    label = f"TP={choices.tensor_parallel}"
    if choices.pipeline_parallel and choices.pipeline_parallel > 1:
        label += f" × PP={choices.pipeline_parallel}"
    return label


def own_flags(choices: DeployChoices) -> list[str]:
    """The flags every launch of this kind passes (recipe_book/bundled/engines.yaml)."""
    return [flag.text() for flag in launch_data(choices.recipe).flags]


def engine_flags(choices: DeployChoices, *, vllm: bool) -> list[str]:
    """Memory and context as planned, then the chosen recipe's flags, filled for this plan
    (recipe_book/choose.py), less any the launch already passes."""
    flags = []
    if vllm:
        flags += [f"--gpu-memory-utilization {choices.gpu_memory_utilization:g}"]
        if choices.max_model_len:
            flags.append(f"--max-model-len {choices.max_model_len}")
    else:
        flags += [f"--mem-fraction-static {choices.gpu_memory_utilization:g}"]
        if choices.max_model_len:
            flags.append(f"--context-length {choices.max_model_len}")
    named = {text.split()[0] for text in own_flags(choices)}
    return flags + [f for f in choices.serve_flags if f.split()[0] not in named]


@dataclass(frozen=True)
class RankedLaunch:
    """How one engine starts the same launch on every node with its rank (workers first)."""

    name: str
    engine: str
    env: Callable[[FabricPath, FabricPath], dict[str, str]]
    launch: Callable[[DeployChoices, FabricPath, int], str]
    default_port: int
    default_dist_port: int


def ranked_recipe(
    launch: RankedLaunch, choices: DeployChoices, fabric: dict[str, FabricPath]
) -> Recipe:
    """Workers' containers and ranks first (each waits for rank 0), then rank 0 serves."""
    head = fabric[choices.head]
    container = choices.container
    steps: list[DeployStep] = []
    for rank, worker in enumerate(choices.workers, start=1):
        steps.append(container_step(choices, worker, launch.env(fabric[worker], head), []))
        steps.append(
            DeployStep(
                kind="rank",
                id=f"rank:{worker}",
                title=f"start {launch.engine} rank {rank}",
                host=worker,
                actions=[launch.launch(choices, head, rank)],
                check=job_log_check(
                    worker,
                    rank_job(rank),
                    "the rank's job log shows no error (it waits for rank 0)",
                    FAILED_LINE,
                    absent=True,
                ),
                rollback=f"docker rm -f {container}",
                needs=[f"container:{worker}"],
                job=rank_job(rank),
                wait=False,
            )
        )
    ranks = [step.id for step in steps if step.kind == "rank"]
    steps.append(container_step(choices, choices.head, launch.env(head, head), ranks))
    steps.append(
        serve_step(
            choices,
            f"serve {choices.model} with {launch.engine} rank 0",
            launch.launch(choices, head, 0),
            [f"container:{choices.head}", *ranks],
        )
    )
    port = choices.port or launch.default_port
    return Recipe(
        name=launch.name,
        steps=steps,
        preflight=PREFLIGHT_COMMON,
        head=choices.head,
        port=port,
        ports={choices.head: [port, choices.dist_port or launch.default_dist_port]},
    )
