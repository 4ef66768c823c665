"""spark-vllm-docker's recipe format, read into a Scout recipe as that repository's runner reads it.

The definition is the runner's source (eugr/spark-vllm-docker `run-recipe.py`, `load_recipe` and
`generate_launch_script`, at 358bf26), not its README: required `name`, `recipe_version`,
`container` and `command`; optional `description`, `model`, `mods`, `defaults`, `env`,
`build_args`, `cluster_only` and `solo_only`. The runner knows no other key.

How Scout honours each: `command` is kept as the runner's template and filled per plan with
`str.format` semantics (runner_template.py), Scout's own values (parallel sizes, memory, context,
host, port) overlaying `defaults` as the runner's CLI overrides do; the flags Scout sets itself
are taken out of the filled command. `env` is exported verbatim (the runner does not template
it). `defaults.tensor_parallel`/`pipeline_parallel`, `cluster_only` and `solo_only` are the
recipe's topology (recipe_topology.py). `mods` are applied where Scout can (community_mods.py).
A `container` with no registry is the image the runner builds (`build-and-copy.sh -t NAME`),
never pulled. `recipe_version` other than the runner's "1", or missing, is read as version 1
and said.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from tools.deploy.recipe_book.community_mods import WORKSPACE_FILE, read_mods
from tools.deploy.recipe_book.runner_template import canonical, fill, read_command, words
from tools.deploy.recipe_book.schema import (
    EnvVar,
    Flag,
    ImageChoice,
    Recipe,
    Sourced,
    WorkspaceFile,
)

RUNNER = "spark-vllm-docker's run-recipe.py"
REQUIRED = ("name", "recipe_version", "container", "command")
FIELDS = (
    frozenset(REQUIRED)
    | {"description", "model", "mods", "defaults", "env"}
    | {
        "build_args",
        "cluster_only",
        "solo_only",
    }
)
SUPPORTED_VERSIONS = ("1",)
# Flags Scout computes for every plan (parallel_flags, engine_flags, the launch's own).
PLANNED = frozenset(
    {"--port", "--host", "-tp", "--tensor-parallel-size", "-pp", "--pipeline-parallel-size"}
    | {"--gpu-memory-utilization", "--max-model-len", "--distributed-executor-backend"}
    | {"--tp", "--tp-size", "--pp-size", "--mem-fraction-static", "--context-length"}
    | {"--model-path", "--nnodes", "--node-rank", "--master-addr", "--master-port", "--headless"}
    | {"--dist-init-addr"}
)
# What the filled command asks of the plan, by the flag that carries it.
ASKED = {
    "--tensor-parallel-size": "tensor_parallel",
    "--pipeline-parallel-size": "pipeline_parallel",
    "--gpu-memory-utilization": "gpu_memory_utilization",
    "--max-model-len": "max_model_len",
}
OTHER_DEFAULTS = ("max_num_batched_tokens", "max_num_seqs")
# What Scout fills for a plan, twice with other values: a planned flag whose value is the same
# in both is the recipe's own (`-tp 1` written out, or filled from `defaults`).
PLAN_KEYS = (
    {"tensor_parallel": 1, "pipeline_parallel": 1, "gpu_memory_utilization": 0.5}
    | {"max_model_len": 1024, "port": 8000, "host": "0.0.0.0"},
    {"tensor_parallel": 2, "pipeline_parallel": 2, "gpu_memory_utilization": 0.6}
    | {"max_model_len": 2048, "port": 8001, "host": "127.0.0.1"},
)


def read_community(data: dict[str, Any], origin: str, path: Path | None = None) -> Recipe:
    """The recipe; ValueError (one line) for what the runner would refuse. `path`: the file on
    this machine, so its repository's mods can be read."""
    unknown = sorted(set(data) - FIELDS)
    if unknown:
        raise ValueError(
            f"unknown key(s) {', '.join(unknown)} in a community recipe ({RUNNER} knows "
            f"{', '.join(sorted(FIELDS))})"
        )
    for key in ("name", "container", "command"):
        if not isinstance(data.get(key), str) or not data[key].strip():
            raise ValueError(f"`{key}` is required (a string)")
    if data.get("cluster_only") and data.get("solo_only"):
        raise ValueError("`cluster_only` and `solo_only` are both true: no layout can run it")
    defaults = mapping_of(data, "defaults")
    env = mapping_of(data, "env")
    params = {str(k): v for k, v in defaults.items() if isinstance(v, int | float | str)}
    serve, other = (read_command(words(fill(data["command"], {**p, **params}))) for p in PLAN_KEYS)
    model = serve.model or data.get("model")
    if not model:
        raise ValueError("no model (neither `model` nor one in `command`)")
    source = f"community recipe {origin} ({data['name']})"
    mods = [str(m) for m in data.get("mods") or []]
    reading = read_mods(mods, path)
    flags = [
        flag_of(group, f"{source}: command") for group in serve.flags if group[0] not in PLANNED
    ]
    missing = {
        value: why_missing(value, reading.mentions)
        for flag in flags
        for value in flag.words()[1:]
        if WORKSPACE_FILE.match(value) and value not in {f.name for f in reading.files}
    }
    missing |= {
        flag.flag: f"{flag.flag} is added to vLLM by mod `{reading.flags[flag.flag]}`, which "
        "Scout cannot apply"
        for flag in flags
        if flag.flag in reading.flags
    }
    asked = asked_values(serve.flags, other.flags)
    planned_keys = [k for k in PLAN_KEYS[0] if feeds_only_planned(data["command"], k, params)]
    build = _build(data)
    return Recipe.model_validate(
        {
            "name": slug(data["name"]),
            "description": str(data.get("description") or data["name"]),
            "models": list(dict.fromkeys(m for m in (serve.model, data.get("model")) if m)),
            "engine": serve.engine,
            "launch": "vllm-ray" if serve.engine == "vllm" else "sglang",
            "image": ImageChoice(ref=data["container"], source=f"{source}: container"),
            "defaults": {
                **{
                    key: Sourced(value=defaults[key], source=f"{source}: defaults.{key}")
                    for key in OTHER_DEFAULTS
                    if key in defaults
                },
                **{
                    key: Sourced(value=value, source=f"{source}: command `{flag} {value}`")
                    for flag, (key, value) in asked.items()
                },
            },
            "flags": flags,
            "env": [
                EnvVar(name=str(k), value=str(v), source=f"{source}: env") for k, v in env.items()
            ],
            "min_nodes": 2 if data.get("cluster_only") else 1,
            "max_nodes": 1 if data.get("solo_only") else None,
            "params": params,
            "not_applied": [*_version_lines(data), *reading.warnings, *_build_args(data, build)],
            "command": data["command"],
            "planned_keys": planned_keys,
            "workspace_files": [
                WorkspaceFile(name=f.name, text=f.text, source=f.source) for f in reading.files
            ],
            "left_out": missing,
            "build": build,
            "origin": origin,
        }
    )


def asked_values(
    one: tuple[tuple[str, ...], ...], two: tuple[tuple[str, ...], ...]
) -> dict[str, tuple[str, int | float | str]]:
    """Planned flags with the same single value in both fillings: the recipe's own values."""
    first = {canonical(g[0]): g[1:] for g in one}
    second = {canonical(g[0]): g[1:] for g in two}
    return {
        flag: (key, _scalar(first[flag][0]))
        for flag, key in ASKED.items()
        if len(first.get(flag, ())) == 1 and first[flag] == second.get(flag)
    }


def feeds_only_planned(
    template: str, key: str, params: dict[str, Any], render: Callable[..., str] = fill
) -> bool:
    """Whether `{key}` fills only flags Scout sets itself (or none): then Scout's value for it
    may stand in everywhere, as the runner's CLI override would; a key the command uses for
    another flag (`--gpu-memory-utilization-gb {gpu_memory_utilization}`) keeps the recipe's."""
    mark = "scout-mark-value"
    filled = render(template, {**PLAN_KEYS[0], **params, key: mark})
    groups = read_command(words(filled)).flags
    return all(g[0] in PLANNED for g in groups if any(mark in w for w in g))


def _scalar(word: str) -> int | float | str:
    for kind in (int, float):
        try:
            return kind(word)
        except ValueError:
            continue
    return word


def mapping_of(data: dict[str, Any], key: str) -> dict[str, Any]:
    value = data.get(key) or {}  # `env:` with nothing under it is YAML null, as the runner sees
    if not isinstance(value, dict):
        raise ValueError(f"`{key}` must be a mapping")
    return value


def flag_of(group: tuple[str, ...], source: str) -> Flag:
    name, *values = group
    return Flag(flag=name, value=values[0] if values else None, more=values[1:], source=source)


def why_missing(name: str, mentions: dict[str, str]) -> str:
    mod = mentions.get(name)
    if mod is not None:
        return f"{name} is written by mod `{mod}`, which Scout cannot apply"
    return f"{name} is a file the runner's working directory must hold; no mod Scout read makes it"


def _version_lines(data: dict[str, Any]) -> list[str]:
    if "recipe_version" not in data:
        return [f"`recipe_version` missing ({RUNNER} requires it): read as version 1"]
    version = str(data["recipe_version"])
    if version not in SUPPORTED_VERSIONS:
        return [
            f"`recipe_version` {version}: {RUNNER} supports {', '.join(SUPPORTED_VERSIONS)}; "
            "read as version 1 (some features may not work)"
        ]
    return []


def _build(data: dict[str, Any]) -> str | None:
    """How the runner gets a `container` without a registry: it builds it, never pulls it."""
    image = str(data["container"])
    if "/" in image:
        return None
    args = " ".join(str(a) for a in data.get("build_args") or [])
    return f"./build-and-copy.sh -t {image}{' ' + args if args else ''}"


def _build_args(data: dict[str, Any], build: str | None) -> list[str]:
    if not data.get("build_args") or build is not None:
        return []
    args = " ".join(str(a) for a in data["build_args"])
    return [f"build_args `{args}`: options of spark-vllm-docker's image build"]


def slug(name: str) -> str:
    slug = "".join(c if c.isalnum() or c in "._-" else "-" for c in name.lower()).strip("-")
    return slug or "community-recipe"
