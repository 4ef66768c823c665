"""What a recipe file holds. Every line that ends up in a command carries `source`: where the
practice comes from (a playbook, a community recipe, a release note), so the plan and the
generated docs can say why each flag is there."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

Engine = Literal["vllm", "sglang"]
Launch = Literal["vllm-ray", "vllm-multinode", "sglang"]


class Strict(BaseModel):
    """Recipe parts refuse unknown keys: a misspelt key is an error, never silently ignored."""

    model_config = ConfigDict(extra="forbid", frozen=True)


class Flag(Strict):
    """One serve flag: `--enable-prefix-caching`, or `--tool-call-parser` with `qwen3_coder`,
    or one with several values (`--cudagraph-capture-sizes 5 10 15 20`: `more` holds 10 15 20).

    `since`: the first engine version that knows the flag (left out, and said, on older ones).
    """

    flag: str = Field(pattern=r"^-{1,2}[A-Za-z0-9][A-Za-z0-9_.-]*$")
    value: str | None = None
    more: list[str] = Field(default_factory=list)
    since: str | None = None
    need: str | None = None  # what the model needs it for: tool calling, reasoning, remote code
    why: str = ""
    source: str = Field(min_length=3)

    def words(self) -> list[str]:
        return [self.flag] if self.value is None else [self.flag, self.value, *self.more]

    def text(self) -> str:
        return " ".join(self.words())


class EnvVar(Strict):
    name: str = Field(pattern=r"^[A-Za-z_][A-Za-z0-9_]*$")
    value: str
    source: str = Field(min_length=3)


class Sourced(Strict):
    """A default value and where it comes from."""

    value: int | float | str | bool
    source: str = Field(min_length=3)


class ImageChoice(Strict):
    """The image to run, and the engine version it ships (until the image probe says)."""

    ref: str = Field(min_length=3)
    engine_version: str | None = None
    source: str = Field(min_length=3)


class BadImage(Strict):
    """An image version known not to work for this recipe, refused with the reason."""

    ref: str = Field(min_length=3)
    why: str = Field(min_length=3)
    source: str = Field(min_length=3)


class ModelShape(Strict):
    """The numbers of the model's config.json that size its KV cache, as recorded with a source
    (used only when neither a host's cached snapshot nor the Hub answers)."""

    max_position_embeddings: int = Field(ge=1)
    num_hidden_layers: int = Field(ge=1)
    full_attention_layers: int | None = Field(default=None, ge=0)
    num_key_value_heads: int = Field(ge=1)
    head_dim: int = Field(ge=1)
    source: str = Field(min_length=3)


class Alternative(Strict):
    """Another published checkpoint of the same model that fits fewer nodes: the trade-off
    the plan states in one line."""

    model: str
    nodes: int = Field(ge=1)
    size_gb: float = Field(gt=0)
    says: str = Field(min_length=3)
    source: str = Field(min_length=3)


class WorkspaceFile(Strict):
    """A file the serve command names by a relative path, written into the engine container's
    working directory first (a community mod's chat template)."""

    name: str = Field(pattern=r"^[A-Za-z0-9_][\w.-]*$")
    text: str
    source: str = Field(min_length=3)


class Defaults(Strict):
    tensor_parallel: Sourced | None = None
    pipeline_parallel: Sourced | None = None
    gpu_memory_utilization: Sourced | None = None
    max_model_len: Sourced | None = None
    max_num_batched_tokens: Sourced | None = None
    max_num_seqs: Sourced | None = None


class Recipe(Strict):
    """One recipe: for `models` (exact ids or fnmatch patterns) on `hardware`, served by
    `engine` through `launch`."""

    name: str = Field(pattern=r"^[a-z0-9][a-z0-9._-]*$")
    description: str = ""
    models: list[str] = Field(min_length=1)
    hardware: list[str] = Field(default_factory=list)  # GPU names it was written for; [] = any
    engine: Engine
    launch: Launch
    image: ImageChoice | None = None
    known_bad_images: list[BadImage] = Field(default_factory=list)
    defaults: Defaults = Defaults()
    flags: list[Flag] = Field(default_factory=list)
    env: list[EnvVar] = Field(default_factory=list)
    model_shape: ModelShape | None = None
    alternatives: list[Alternative] = Field(default_factory=list)
    min_nodes: int = Field(default=1, ge=1)  # the community's `cluster_only: true` is 2
    max_nodes: int | None = Field(default=None, ge=1)  # the community's `solo_only: true` is 1
    # the community runner's `command` template, filled and read per plan (runner_template.py)
    command: str | None = None
    planned_keys: list[str] = Field(default_factory=list)  # `{key}`s only Scout's flags use
    workspace_files: list[WorkspaceFile] = Field(default_factory=list)
    # a file a flag names, or a flag, → why Scout leaves the flag out (a mod it cannot apply)
    left_out: dict[str, str] = Field(default_factory=dict)
    build: str | None = None  # how the image is built where it cannot be pulled
    params: dict[str, int | float | str] = Field(default_factory=dict)  # for `{param}` in values
    not_applied: list[str] = Field(default_factory=list)  # parts Scout cannot apply (community)
    origin: str = "bundled"  # the file it came from
    # the runner whose rules read the file (sparkrun or spark-vllm-docker), why, and what the
    # other runner would do differently with it (runner_choice.py)
    runner: str | None = None
    runner_said: str = ""
    runner_differences: list[str] = Field(default_factory=list)
