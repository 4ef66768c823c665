"""What spark-vllm-docker's own runner renders for each community recipe (issue 37).

The expected side of the comparison test is the real `run-recipe.py --dry-run` of a checkout at
358bf26 (never committed here: run it from a fetched snapshot). Its output is kept in
tests/fixtures/recipes/spark-vllm-docker-358bf26-runner.json so the comparison runs in CI without
the checkout; tests/unit/test_community_recipes.py checks the file against the runner whenever
`SCOUT_SPARK_VLLM_DOCKER` names a checkout. Rewrite it with
`python -m tests.support.runner_table CHECKOUT`.

Each recipe is rendered on a cluster of its own size: one node for `solo_only`, else
`tensor_parallel × pipeline_parallel` nodes of one GPU (two at least for `cluster_only`), and
solo when that is one.
"""

from __future__ import annotations

import json
import shlex
import subprocess
import sys
from pathlib import Path

import yaml

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "recipes"
RECIPES = FIXTURES / "spark-vllm-docker-358bf26" / "recipes"
TABLE = FIXTURES / "spark-vllm-docker-358bf26-runner.json"


def recipe_files() -> list[str]:
    """Every recipe of the copy, relative to its `recipes/` folder."""
    return sorted(str(p.relative_to(RECIPES)) for p in RECIPES.rglob("*.yaml"))


def recipe_size(data: dict) -> int:
    """The node count the recipe is rendered on (see the module docstring)."""
    if data.get("solo_only"):
        return 1
    defaults = data.get("defaults") or {}
    world = int(defaults.get("tensor_parallel") or 1) * int(defaults.get("pipeline_parallel") or 1)
    return max(world, 2) if data.get("cluster_only") else world


def node_ips(count: int) -> list[str]:
    return [f"192.168.100.{10 + i}" for i in range(count)]


def runner_rendering(checkout: Path, relative: str) -> dict:
    """The runner's dry run of one recipe, read back: image, nodes, env as bash exports it,
    and the serve command's words."""
    data = yaml.safe_load((RECIPES / relative).read_text(encoding="utf-8"))
    nodes = recipe_size(data)
    where = ["--solo"] if nodes == 1 else ["-n", ",".join(node_ips(nodes))]
    out = subprocess.run(
        [sys.executable, "run-recipe.py", f"recipes/{relative}", "--dry-run", *where],
        cwd=checkout,
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    script = out.split("=== Generated Launch Script ===\n", 1)[1].split("=== What would")[0]
    image = next(line for line in out.splitlines() if line.startswith("Container: "))
    env, command = {}, []
    for line in script.split("# Run the model\n", 1)[0].splitlines():
        if line.startswith("export "):
            name, _, value = line[len("export ") :].partition("=")
            env[name] = shlex.split(value)[0] if value else ""  # what bash makes of it
    command = shlex.split(script.split("# Run the model\n", 1)[1].replace("\\\n", " "))
    return {"image": image.split(": ", 1)[1], "nodes": nodes, "env": env, "command": command}


def main(argv: list[str]) -> int:
    checkout = Path(argv[0])
    table = {name: runner_rendering(checkout, name) for name in recipe_files()}
    TABLE.write_text(json.dumps(table, indent=1, sort_keys=True) + "\n", encoding="utf-8")
    print(f"wrote {TABLE} ({len(table)} recipes)")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
