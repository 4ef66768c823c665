"""A recipe read as sparkrun reads it (spark-arena/sparkrun@0041b8f, src/sparkrun/core/recipe.py
`Recipe.__init__`/`resolve`, builders/eugr.py, runtimes/).

Other rules than spark-vllm-docker's run-recipe.py for the same YAML: there is no schema, so a
top-level key sparkrun does not know is kept aside for its runtime (`runtime_config`), not
refused; the recipe is named by its file, not its `name`; `recipe_version` is "2" unless said.
The runtime is `runtime`, else the command's first words (`vllm serve`, sglang), else vLLM. The
command is filled leniently (sparkrun_template.py), or written from `defaults` when the recipe
has none. Topology comes only from `defaults` (`tensor_parallel` × `pipeline_parallel` ×
`data_parallel` nodes, core/parallelism.py) and `mode`/`min_nodes`/`max_nodes`/`solo_only`/
`cluster_only`; a `-tp 4` written in the command sizes nothing. The eugr builder (a v1 recipe, or
one with `build_args`, `mods` or the eugr nightly image) builds an image that names no known
registry, where the host lacks it, with spark-vllm-docker's `build-and-copy.sh`; the docker-pull
builder pulls every image. `env` values are expanded on the machine sparkrun runs from.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from tools.deploy.recipe_book.community import (
    OTHER_DEFAULTS,
    PLAN_KEYS,
    PLANNED,
    asked_values,
    feeds_only_planned,
    flag_of,
    mapping_of,
    slug,
    why_missing,
)
from tools.deploy.recipe_book.community_mods import WORKSPACE_FILE, read_mods
from tools.deploy.recipe_book.runner_declaration import Declaration, mod_folder
from tools.deploy.recipe_book.runner_template import read_command, words
from tools.deploy.recipe_book.schema import EnvVar, ImageChoice, Recipe, Sourced, WorkspaceFile
from tools.deploy.recipe_book.sparkrun_template import (
    fill_lenient,
    serve_part,
    unfilled,
    written_command,
)

RUNNER = "sparkrun"
# src/sparkrun/core/recipe.py `_KNOWN_KEYS`
KNOWN = frozenset(
    {"sparkrun_version", "recipe_version", "name", "description", "model", "model_revision"}
    | {"runtime", "runtime_version", "mode", "min_nodes", "max_nodes", "container", "defaults"}
    | {"env", "command", "runtime_config", "cluster_only", "solo_only", "benchmark", "metadata"}
    | {"pre_exec", "post_exec", "post_commands", "mods", "stop_after_post", "builder"}
    | {"builder_config", "executor_config", "distribution_config"}
)
ENGINES = {"vllm": "vllm", "vllm-distributed": "vllm", "vllm-ray": "vllm", "eugr-vllm": "vllm"}
ENGINES |= {"sglang": "sglang"}
# builders/base.py PULLABLE_REGISTRY_PREFIXES: an image naming one is pulled, never built
PULLABLE = ("docker.io/", "ghcr.io/", "nvcr.io/", "quay.io/", "registry.hub.docker.com/")
PULLABLE += ("public.ecr.aws/", "gcr.io/")
# builders/eugr.py: the eugr nightly images at :latest are built locally under these names
NIGHTLY = {
    "ghcr.io/spark-arena/dgx-vllm-eugr-nightly:latest": ("sparkrun-eugr-vllm", []),
    "ghcr.io/spark-arena/dgx-vllm-eugr-nightly-tf5:latest": ("sparkrun-eugr-vllm-tf5", ["--tf5"]),
}
NIGHTLY_PREFIX = "ghcr.io/spark-arena/dgx-vllm-eugr-nightly"
HOOKS = ("pre_exec", "post_exec", "post_commands")
SETTINGS = ("builder_config", "executor_config", "distribution_config")
USED_ASIDE = frozenset({"name", "build_args", "mods"})  # read though sparkrun keeps them aside


class RuntimeNotServed(ValueError):
    """A recipe sparkrun runs with a runtime Scout does not serve (llama.cpp, TensorRT-LLM, a
    plugin): the file reads, but no plan can come from it."""


def runtime_of(data: dict[str, Any]) -> str:
    """`runtime`, else what the command's first words run (`_resolve_runtime_from_command_hint`),
    else vLLM."""
    if data.get("runtime"):
        return str(data["runtime"])
    command = str(data.get("command") or "").strip()
    first = command.split()[:3]
    if first[:2] == ["sglang", "serve"] or "sglang.launch_server" in first:
        return "sglang"
    if first[:1] == ["llama-server"]:
        return "llama-cpp"
    if first[:1] == ["trtllm-serve"] or (first[:1] == ["mpirun"] and "trtllm" in command):
        return "trtllm"
    return "vllm"


def read_sparkrun(
    data: dict[str, Any], origin: str, path: Path | None = None, where: Declaration | None = None
) -> Recipe:
    """The recipe; ValueError (one line) for what sparkrun cannot run, RuntimeNotServed for a
    runtime Scout does not serve."""
    runtime = runtime_of(data)
    engine = ENGINES.get(runtime)
    if engine is None:
        raise RuntimeNotServed(
            f"runtime `{runtime}`: sparkrun runs it with its own runtime plugin; Scout serves "
            f"vLLM and SGLang ({', '.join(sorted(ENGINES))})"
        )
    for key in ("model", "container"):
        if not isinstance(data.get(key), str) or not data[key].strip():
            raise ValueError(f"`{key}` is required (a string): sparkrun lists no recipe without it")
    defaults, env = mapping_of(data, "defaults"), mapping_of(data, "env")
    aside = mapping_of(data, "runtime_config") | {k: v for k, v in data.items() if k not in KNOWN}
    params = {str(k): v for k, v in defaults.items() if isinstance(v, int | float | str)}
    params.setdefault("model", data["model"])
    template, script = serve_part(str(data.get("command") or written_command(engine, defaults)))
    if "served_model_name" in defaults and "--served-model-name" not in template:
        # runtimes/base.py `_augment_served_model_name`: appended where the command lacks it
        template = template.rstrip() + " --served-model-name {served_model_name}"
    serve, other = (read_command(words(fill_lenient(template, {**p, **params}))) for p in PLAN_KEYS)
    source = f"sparkrun recipe {origin}"
    mods = [str(m) for m in data.get("mods") or aside.get("mods") or []]
    reading = read_mods(mods, path, locate=lambda mod: mod_folder(mod, path, where))
    flags = [flag_of(g, f"{source}: command") for g in serve.flags if g[0] not in PLANNED]
    files = {f.name for f in reading.files}
    missing = {
        value: why_missing(value, reading.mentions)
        for flag in flags
        for value in flag.words()[1:]
        if WORKSPACE_FILE.match(value) and value not in files
    }
    missing |= {
        f.flag: f"{f.flag} is added to vLLM by mod `{reading.flags[f.flag]}`, which Scout "
        "cannot apply"
        for f in flags
        if f.flag in reading.flags
    }
    low, high = _nodes(data)
    image, build, image_lines = _image(data, runtime, aside, mods)
    asked = asked_values(serve.flags, other.flags)
    return Recipe.model_validate(
        {
            "name": slug(path.stem if path is not None else str(data.get("name") or "")),
            "description": str(data.get("description") or _meta(data) or data["model"]),
            "models": list(dict.fromkeys(m for m in (data["model"], serve.model) if m)),
            "engine": serve.engine,
            "launch": "vllm-ray" if serve.engine == "vllm" else "sglang",
            "image": ImageChoice(ref=image, source=f"{source}: container"),
            "defaults": {
                **{
                    key: Sourced(value=defaults[key], source=f"{source}: defaults.{key}")
                    for key in ("tensor_parallel", "pipeline_parallel", *OTHER_DEFAULTS)
                    if isinstance(defaults.get(key), int | float | str)
                },
                **{
                    key: Sourced(value=value, source=f"{source}: command `{flag} {value}`")
                    for flag, (key, value) in asked.items()
                    if key not in ("tensor_parallel", "pipeline_parallel")
                },
            },
            "flags": flags,
            "env": [
                EnvVar(name=str(k), value=str(v), source=f"{source}: env") for k, v in env.items()
            ],
            "min_nodes": low,
            "max_nodes": high,
            "params": params,
            "not_applied": [
                *[f"`command` also runs `{line[:80]}`: not run by Scout" for line in script],
                *_unfilled_lines(template, params),
                *reading.warnings,
                *image_lines,
                *_aside_lines(data, aside, defaults, env),
            ],
            "command": template,
            "planned_keys": [
                k
                for k in PLAN_KEYS[0]
                if feeds_only_planned(template, k, params, render=fill_lenient)
            ],
            "workspace_files": [
                WorkspaceFile(name=f.name, text=f.text, source=f.source) for f in reading.files
            ],
            "left_out": missing,
            "build": build,
            "origin": origin,
        }
    )


def _nodes(data: dict[str, Any]) -> tuple[int, int | None]:
    """(min_nodes, max_nodes) as `Recipe.__init__` sets them; ValueError as `validate` says."""
    try:
        low = int(data.get("min_nodes", 1))
        high = None if data.get("max_nodes") is None else int(data["max_nodes"])
    except (TypeError, ValueError):
        raise ValueError("`min_nodes` and `max_nodes` must be whole numbers") from None
    if data.get("mode", "auto") == "solo":
        low = high = 1
    if data.get("cluster_only"):
        low = max(low, 2)
    if data.get("solo_only"):
        high = 1
    if low < 1 or (high is not None and high < low):
        raise ValueError(f"min_nodes {low} and max_nodes {high}: no node count runs it")
    return low, high


def _image(
    data: dict[str, Any], runtime: str, aside: dict[str, Any], mods: list[str]
) -> tuple[str, str | None, list[str]]:
    """(the image run, how it is built or None when pulled, lines for the plan)."""
    image = str(data["container"]).strip()
    args = [str(a) for a in aside.get("build_args") or []]
    builder = str(data.get("builder") or "")
    hinted = str(data.get("recipe_version", "2")) == "1" or bool(args or mods)
    if not builder and runtime == "vllm" and (hinted or image.startswith(NIGHTLY_PREFIX)):
        builder = "eugr"
    if builder in ("", "docker-pull"):
        bare = "/" not in image.split("@")[0]
        said = f"{image} names no registry: sparkrun's docker-pull builder pulls it from Docker Hub"
        return image, None, [said] if bare else []
    if builder != "eugr":
        return image, None, [f"builder `{builder}`: a sparkrun plugin Scout does not run; pulled"]
    if image in NIGHTLY and (not args or args == NIGHTLY[image][1]):
        local, args = NIGHTLY[image]
        return local, _build_line(local, args), [f"{image}: sparkrun builds it as {local}"]
    if image.startswith(PULLABLE):
        return image, None, []
    return image, _build_line(image, args), []


def _build_line(image: str, args: list[str]) -> str:
    """The eugr builder's command (`--cleanup` always added, builders/eugr.py)."""
    return " ".join(["./build-and-copy.sh", "-t", image, *args, "--cleanup"])


def _unfilled_lines(template: str, params: dict[str, Any]) -> list[str]:
    left = unfilled(fill_lenient(template, {**PLAN_KEYS[0], **params}))
    if not left:
        return []
    shown = ", ".join(f"`{name}`" for name in left)
    return [f"{shown} in `command`: no `defaults` key fills it; sparkrun passes it as written"]


def _aside_lines(
    data: dict[str, Any], aside: dict[str, Any], defaults: dict[str, Any], env: dict[str, Any]
) -> list[str]:
    """What sparkrun does with the file that Scout does not."""
    lines = []
    kept = sorted(set(aside) - USED_ASIDE)
    if kept:
        lines.append(
            f"kept aside by sparkrun for its runtime (runtime_config), unused by Scout: "
            f"{', '.join(kept)}"
        )
    for hook in HOOKS:
        if data.get(hook):
            lines.append(f"`{hook}`: commands sparkrun runs around the engine; not run by Scout")
    lines += [
        f"`{key}`: sparkrun settings not applied by Scout" for key in SETTINGS if data.get(key)
    ]
    if str(defaults.get("data_parallel", 1)) not in ("1", "None"):
        lines.append(f"data_parallel {defaults['data_parallel']}: Scout plans one replica")
    lines += [
        f"env {k}: `{v}` is expanded by sparkrun where it runs; Scout passes it as written"
        for k, v in env.items()
        if "$" in str(v)
    ]
    return lines


def _meta(data: dict[str, Any]) -> str:
    meta = data.get("metadata")
    return str(meta.get("description") or "") if isinstance(meta, dict) else ""
