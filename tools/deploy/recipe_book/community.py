"""spark-vllm-docker's recipe format, read into a Scout recipe.

The format (eugr/spark-vllm-docker `recipes/README.md`, "Recipe Format"): required `name`,
`container` (a docker image) and `command` (the serve command, `{param}` placeholders filled from
`defaults` or the runner's overrides); optional `description`, `model`, `cluster_only` (too large
for one node), `build_args` (flags for its build-and-copy.sh), `mods` (patches its launcher
applies inside the container), `defaults` (port, host, tensor_parallel, gpu_memory_utilization,
max_model_len, …) and `env`.

What Scout plans itself (the parallel sizes, memory fraction, context, host and port, the
executor) is taken over from the command; every other flag is kept with its `{param}`s, filled
when the plan is made. `mods` and `build_args` cannot be applied by Scout: they are listed as
not applied, and the plan says so.
"""

from __future__ import annotations

import shlex
from typing import Any

from tools.deploy.recipe_book.schema import EnvVar, Flag, ImageChoice, Recipe, Sourced

FIELDS = frozenset(
    {"name", "description", "model", "container", "cluster_only", "build_args", "mods"}
    | {"defaults", "env", "command"}
)
# Flags Scout computes for every plan (parallel_flags, engine_flags, the launch's own).
PLANNED = frozenset(
    {"--port", "--host", "-tp", "--tensor-parallel-size", "-pp", "--pipeline-parallel-size"}
    | {"--gpu-memory-utilization", "--max-model-len", "--distributed-executor-backend"}
    | {"--tp", "--tp-size", "--pp-size", "--mem-fraction-static", "--context-length"}
    | {"--model-path", "--nnodes", "--node-rank", "--master-addr", "--master-port", "--headless"}
    | {"--dist-init-addr"}
)
DEFAULT_KEYS = ("tensor_parallel", "gpu_memory_utilization", "max_model_len")


def is_community(data: dict[str, Any]) -> bool:
    """The community format has a `command`; Scout's has `flags`."""
    return "command" in data


def read_community(data: dict[str, Any], origin: str) -> Recipe:
    unknown = sorted(set(data) - FIELDS)
    if unknown:
        raise ValueError(f"unknown key(s) {', '.join(unknown)} in a community recipe")
    for key in ("name", "container", "command"):
        if not isinstance(data.get(key), str) or not data[key].strip():
            raise ValueError(f"`{key}` is required (a string)")
    words = shlex.split(data["command"].replace("\\\n", " "))
    engine, model, rest = _engine_and_model(words, origin)
    model = data.get("model") or model
    if not model:
        raise ValueError("no model (neither `model` nor one in `command`)")
    source = f"community recipe {origin} ({data['name']})"
    defaults = data.get("defaults") or {}
    if not isinstance(defaults, dict):
        raise ValueError("`defaults` must be a mapping")
    env = data.get("env") or {}
    if not isinstance(env, dict):
        raise ValueError("`env` must be a mapping")
    return Recipe.model_validate(
        {
            "name": _slug(data["name"]),
            "description": str(data.get("description") or data["name"]),
            "models": [model],
            "engine": engine,
            "launch": "vllm-ray" if engine == "vllm" else "sglang",
            "image": ImageChoice(ref=data["container"], source=f"{source}: container"),
            "defaults": {
                key: Sourced(value=defaults[key], source=f"{source}: defaults.{key}")
                for key in DEFAULT_KEYS
                if key in defaults
            },
            "flags": _flags(rest, f"{source}: command"),
            "env": [
                EnvVar(name=str(k), value=str(v), source=f"{source}: env") for k, v in env.items()
            ],
            "min_nodes": 2 if data.get("cluster_only") else 1,
            "params": {str(k): v for k, v in defaults.items() if isinstance(v, int | float | str)},
            "not_applied": _not_applied(data),
            "origin": origin,
        }
    )


def _engine_and_model(words: list[str], origin: str) -> tuple[str, str | None, list[str]]:
    """`vllm serve MODEL …` or `python3 -m sglang.launch_server --model-path MODEL …`."""
    if "serve" in words and words[0].endswith("vllm"):
        at = words.index("serve") + 1
        if at < len(words) and not words[at].startswith("-"):
            return "vllm", words[at], words[at + 1 :]
        return "vllm", None, words[at:]
    if "sglang.launch_server" in words:
        rest = words[words.index("sglang.launch_server") + 1 :]
        model = next((rest[i + 1] for i, w in enumerate(rest[:-1]) if w == "--model-path"), None)
        return "sglang", model, rest
    raise ValueError("`command` runs neither `vllm serve` nor sglang.launch_server")


def _flags(words: list[str], source: str) -> list[Flag]:
    """Each `--flag [value]` of the command, less what Scout plans itself."""
    flags: list[Flag] = []
    i = 0
    while i < len(words):
        word = words[i]
        if not word.startswith("-"):
            raise ValueError(f"{source}: `{word}` follows no flag")
        name, eq, value = word.partition("=")
        if not eq and i + 1 < len(words) and not words[i + 1].startswith("-"):
            value, i = words[i + 1], i + 1
        i += 1
        if name not in PLANNED:
            flags.append(Flag(flag=name, value=value or None, source=source))
    return flags


def _not_applied(data: dict[str, Any]) -> list[str]:
    lines = [
        f"mod `{mod}`: a patch spark-vllm-docker's launcher applies inside the container"
        for mod in data.get("mods") or []
    ]
    if data.get("build_args"):
        args = " ".join(str(a) for a in data["build_args"])
        lines.append(f"build_args `{args}`: options of spark-vllm-docker's image build")
    return lines


def _slug(name: str) -> str:
    slug = "".join(c if c.isalnum() or c in "._-" else "-" for c in name.lower()).strip("-")
    return slug or "community-recipe"
