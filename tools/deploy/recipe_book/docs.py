"""docs/playbook-flags.md, rendered from the data: the engines' own flags and env
(bundled/engines.yaml), what Python builds from the fabric and layout (bundled/practice.yaml) and
every bundled recipe, each line with its source. Generated, so it cannot drift from the data."""

from __future__ import annotations

from importlib.resources import files

from tools.deploy.recipe_book.engines import engine_book
from tools.deploy.recipe_book.load import bundled_recipes
from tools.deploy.recipe_book.schema import Recipe
from tools.text.yaml_files import load_yaml

HEADER = """\
# Scout's deployment commands, flag by flag, against the playbooks they follow

Generated from tools/deploy/recipe_book/bundled/ by `python -m tools.deploy.recipe_book
--write-docs`; do not edit by hand (a test fails when this file is stale). Section numbers (§)
are those of `docs/sources.md`, which quotes the sources: NVIDIA's DGX Spark
playbooks, vLLM's `run_cluster.sh` and multi-node docs, eugr's spark-vllm-docker, MiaAI-Lab's
two-Spark compose recipes, SGLang's docs. "Scout" in the source column marks a choice of
Scout's own, with the reason.
"""


def _cell(text: object) -> str:
    return str(text).replace("|", "\\|").replace("\n", " ")


def _table(columns: list[str], rows: list[list[str]]) -> list[str]:
    lines = ["| " + " | ".join(columns) + " |", "|" + "---|" * len(columns)]
    return lines + ["| " + " | ".join(_cell(c) for c in row) + " |" for row in rows]


def _engines() -> list[str]:
    book = engine_book()
    lines = ["## Every launch of an engine (bundled/engines.yaml)", ""]
    rows = []
    for name, launch in book.launches.items():
        rows.append([name, "image", f"`{launch.image.ref}`", launch.image.source])
        for key in ("port", "dist_port", "container"):
            part = getattr(launch, key)
            rows.append([name, key, f"`{part.value}`", part.source])
        rows += [
            [name, f"`{f.flag}`", f"`{f.value}`" if f.value else "—", f.source]
            for f in launch.flags
        ]
        rows += [[name, f"env `{v.name}`", f"`{v.value}`", v.source] for v in launch.env]
    rows += [["RDMA fabric", f"env `{v.name}`", f"`{v.value}`", v.source] for v in book.rdma_env]
    rows += [["refused", f"`{b.ref}`", b.why, b.source] for b in book.known_bad_images]
    return [*lines, *_table(["launch", "flag", "value", "source"], rows), ""]


def _practice() -> list[str]:
    text = files("tools.deploy.recipe_book").joinpath("bundled/practice.yaml").read_text()
    lines: list[str] = []
    for section in load_yaml(text)["sections"]:
        lines += [f"## {section['title']}", "", *_table(section["columns"], section["rows"]), ""]
    return lines


def _recipe(recipe: Recipe) -> list[str]:
    lines = [f"### Recipe `{recipe.name}` ({recipe.origin})", "", recipe.description, ""]
    where = ", ".join(recipe.hardware) or "any GPU"
    lines += [
        f"Models: {', '.join(f'`{m}`' for m in recipe.models)}; on {where}; "
        f"{recipe.engine} through `{recipe.launch}`.",
        "",
    ]
    rows: list[list[str]] = []
    if recipe.image:
        version = f" (engine {recipe.image.engine_version})" if recipe.image.engine_version else ""
        rows.append(["image", f"`{recipe.image.ref}`{version}", "", recipe.image.source])
    rows += [["refused image", f"`{b.ref}`", b.why, b.source] for b in recipe.known_bad_images]
    for key, default in recipe.defaults:
        if default is not None:
            rows.append(["default", key, f"`{default.value}`", default.source])
    for flag in recipe.flags:
        since = f"vLLM ≥ {flag.since}" if flag.since else ""
        why = "; ".join(
            p for p in (f"needs {flag.need}" if flag.need else "", flag.why, since) if p
        )
        rows.append(["serve", f"`{flag.text()}`", why, flag.source])
    rows += [["env", f"`{v.name}`", f"`{v.value}`", v.source] for v in recipe.env]
    rows += [["not applied", "", line, "Scout cannot apply it"] for line in recipe.not_applied]
    if recipe.model_shape:
        s = recipe.model_shape
        shape = (
            f"{s.max_position_embeddings} positions, {s.num_hidden_layers} layers "
            f"({s.full_attention_layers if s.full_attention_layers is not None else 'all'} "
            f"full attention), {s.num_key_value_heads} KV heads × {s.head_dim}"
        )
        rows.append(["model shape", "when no config.json answers", shape, s.source])
    rows += [
        ["trade-off", f"`{a.model}` on {a.nodes} node(s)", a.says, a.source]
        for a in recipe.alternatives
    ]
    return [*lines, *_table(["part", "flag / key", "value / why", "source"], rows), ""]


def render() -> str:
    lines = [HEADER, *_engines(), *_practice(), "## Recipes (bundled/*.yaml)", ""]
    for recipe in bundled_recipes():
        lines += _recipe(recipe)
    return "\n".join(lines).rstrip() + "\n"
