"""What the user chose for a deployment: model, engine recipe, hosts, layout and engine settings.

`hosts` are the nodes the plan may use, head first; unless `nodes` or the parallel sizes say
otherwise, plan_deployment uses the fewest of them that hold the model (tools/checks/layout.py)
and resolves the choices to that set (`with_layout`).
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, Field, field_validator
from pydantic.json_schema import SkipJsonSchema

from tools.checks.budget import DEFAULT_UTILIZATION
from tools.checks.layout import Layout
from tools.deploy.recipe_book.engines import launch_data

RecipeName = Literal["vllm-ray", "vllm-multinode", "sglang"]
# Every recipe can split layers across nodes: vLLM with Ray or with --nnodes (mp) takes
# --pipeline-parallel-size (docs/serving/parallelism_scaling.md), SGLang --pp-size (its
# pipeline-parallelism guide); the flag each recipe passes:
PIPELINE_FLAGS: dict[str, str] = {
    "vllm-ray": "--pipeline-parallel-size",
    "vllm-multinode": "--pipeline-parallel-size",
    "sglang": "--pp-size",
}


class DeployChoices(BaseModel):
    """The knobs of one deployment; unset ones take the recipe's defaults (see `resolved`)."""

    model: str = Field(min_length=3, description="Hugging Face model id.")
    recipe: RecipeName = "vllm-ray"
    hosts: list[str] = Field(
        min_length=1, description="Inventory hosts the plan may use; the first is the head."
    )
    nodes: int | None = Field(
        default=None,
        ge=1,
        description="Default: the fewest hosts that hold the model.",
    )
    image: str | None = Field(default=None, description="Default: the recipe's image.")
    recipe_file: str | None = Field(
        default=None,
        description="A serving recipe YAML (Scout's format or spark-vllm-docker's): a path on "
        "Scout's machine, or HOST:PATH on an inventory host (e.g. the head's spark-vllm-docker "
        "checkout); default: the bundled recipe for the model, if any.",
    )
    tensor_parallel: int | None = Field(
        default=None, ge=1, description="Default: chosen with the nodes."
    )
    pipeline_parallel: int | None = Field(
        default=None, ge=1, description="Default: chosen with the nodes."
    )
    port: int | None = Field(default=None, ge=1, le=65535, description="Serving port on the head.")
    gpu_memory_utilization: float | None = Field(
        default=None,
        gt=0.05,
        le=0.95,
        description="Default: the most CUDA gives on every node (≤0.8).",
    )
    max_model_len: int | None = Field(
        default=None, ge=256, description="Default: what the KV cache left holds."
    )
    hf_cache: str = Field(default="~/.cache/huggingface", description="HF cache on each host.")
    container: str | None = None
    fabric_interface: str | None = Field(
        default=None, description="Fabric netdev (default: the one Up on every host)."
    )
    node_ips: dict[str, str] = Field(
        default_factory=dict, description="Fabric IPv4 per host, when recon could not see it."
    )
    shm_size: str = "32g"
    ray_port: int = Field(default=6379, ge=1, le=65535)
    dist_port: int | None = Field(
        default=None, ge=1, le=65535, description="Rendezvous port (vLLM 29501, SGLang 20000)."
    )

    # filled by plan_deployment from the chosen recipe, never by the caller
    serve_flags: SkipJsonSchema[list[str]] = Field(default_factory=list, exclude=True)
    serve_env: SkipJsonSchema[dict[str, str]] = Field(default_factory=dict, exclude=True)
    # files the serve command names by a relative path (a community mod's chat template)
    serve_files: SkipJsonSchema[dict[str, str]] = Field(default_factory=dict, exclude=True)

    @field_validator("hosts")
    @classmethod
    def _distinct(cls, hosts: list[str]) -> list[str]:
        if len(set(hosts)) != len(hosts):
            raise ValueError(f"hosts must be distinct, got {hosts}")
        return hosts

    @property
    def head(self) -> str:
        return self.hosts[0]

    @property
    def workers(self) -> list[str]:
        return self.hosts[1:]

    @property
    def gpus_per_node(self) -> int:
        """GPUs each node gives the engine (resolved choices: TP × PP over the nodes)."""
        world = (self.tensor_parallel or len(self.hosts)) * (self.pipeline_parallel or 1)
        return max(world // len(self.hosts), 1)

    def resolved(self) -> DeployChoices:
        """A copy with every default filled in, so recipes read plain values (without a layout:
        every host, one GPU each)."""
        launch = launch_data(self.recipe)
        dist = self.dist_port or int(launch.dist_port.value)
        return self.model_copy(
            update={
                "image": self.image or launch.image.ref,
                "gpu_memory_utilization": self.gpu_memory_utilization or DEFAULT_UTILIZATION,
                "nodes": self.nodes or len(self.hosts),
                "tensor_parallel": self.tensor_parallel or len(self.hosts),
                "pipeline_parallel": self.pipeline_parallel or 1,
                "port": self.port or int(launch.port.value),
                "container": self.container or str(launch.container.value),
                "dist_port": dist,
            }
        )

    def with_layout(self, layout: Layout) -> DeployChoices:
        """Resolved to the layout's nodes (head first) and parallel sizes."""
        return self.model_copy(
            update={
                "hosts": list(layout.hosts),
                "nodes": len(layout.hosts),
                "tensor_parallel": layout.tensor_parallel,
                "pipeline_parallel": layout.pipeline_parallel,
            }
        ).resolved()
