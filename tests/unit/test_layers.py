"""Imports run one way: faces → evaluation → replay → runtime → safety/world → loop → tools;
sim stands apart.

Inside tools/, the tool modules at its root stand on their parts in subpackages, never the other
way, and tools/world (the world's types) stands on nothing but pydantic and the standard library.
Inside tools/deploy/, the stages stand in one order: plan → proof → rollout → launch → fabric →
the deploy root (steps, choices, the recipe book), each importing only those after it.
Every module of agent/, tools/ and sim/ is parsed with `ast`, imports inside functions and
`TYPE_CHECKING` blocks included, and each import is resolved to the module it loads.
"""

from __future__ import annotations

import ast
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PACKAGES = ("agent", "tools", "sim")
# Inside agent/: the rooms each room may import besides itself (and tools/).
AGENT_ROOMS: dict[str, set[str] | None] = {
    "faces": None,  # anything below it
    "evaluation": {"replay", "standin", "runtime", "safety", "world", "loop"},
    "mcp": {"runtime", "safety", "world", "loop"},
    "replay": {"standin", "runtime", "safety", "world", "loop"},
    "standin": {"loop"},
    "daytwo": {"runtime", "safety", "world", "loop"},
    "runtime": {"safety", "world", "loop"},
    "safety": {"loop"},
    "world": {"loop"},
    "loop": set(),
}


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _modules() -> dict[str, Path]:
    found: dict[str, Path] = {}
    for package in PACKAGES:
        for path in sorted((ROOT / package).rglob("*.py")):
            found[_module_name(path)] = path
    return found


MODULES = _modules()


def _resolve(name: str) -> str | None:
    """The module of ours that `name` loads: itself, or the package it is a name in."""
    while name and name not in MODULES:
        name = name.rpartition(".")[0]
    return name or None


def _imports(module: str, path: Path) -> Iterator[tuple[str, int]]:
    """(imported module of ours, line) for every import statement in the file."""
    is_package = path.name == "__init__.py"
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if (target := _resolve(alias.name)) is not None:
                    yield target, node.lineno
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = module.split(".")
                anchor = anchor[: len(anchor) - node.level + (1 if is_package else 0)]
                base = ".".join([*anchor, base] if base else anchor)
            for alias in node.names:
                target = _resolve(f"{base}.{alias.name}") or _resolve(base)
                if target is not None:
                    yield target, node.lineno


GRAPH: dict[str, dict[str, int]] = {
    module: {target: line for target, line in _imports(module, path) if target != module}
    for module, path in MODULES.items()
}


def _violations(allowed) -> list[str]:
    return [
        f"{module} (line {line}) imports {target}"
        for module, targets in GRAPH.items()
        for target, line in targets.items()
        if not allowed(module, target)
    ]


def _at_tools_root(module: str) -> bool:
    """A module file directly in tools/ (a tool, the contract, the registry), not a package."""
    path = MODULES[module]
    return path.parent == ROOT / "tools" and path.name != "__init__.py"


def _in_tools_subpackage(module: str) -> bool:
    return _top(module) == "tools" and module != "tools" and not _at_tools_root(module)


def _top(module: str) -> str:
    return module.split(".")[0]


def _room(module: str) -> str | None:
    parts = module.split(".")
    return parts[1] if parts[0] == "agent" and len(parts) > 1 else None


def test_the_graph_sees_every_package_and_function_level_imports() -> None:
    assert {"agent.loop.session", "tools.base", "sim.cluster"} <= set(GRAPH)
    assert "agent.loop.session" in GRAPH["agent.runtime.settings"]  # imported inside a method


def test_tools_never_import_agent() -> None:
    assert _violations(lambda m, t: _top(m) != "tools" or _top(t) != "agent") == []


def test_a_tools_subpackage_never_imports_a_module_at_the_tools_root() -> None:
    def allowed(module: str, target: str) -> bool:
        if not _in_tools_subpackage(module):
            return True
        return _top(target) != "tools" or not _at_tools_root(target)

    assert _violations(allowed) == []


def _third_party_imports(path: Path) -> Iterator[tuple[str, int]]:
    """(top-level name, line) of every absolute import of something that is not ours."""
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and not node.level and node.module:
            names = [node.module]
        else:
            continue
        for name in names:
            if name.split(".")[0] not in PACKAGES:
                yield name.split(".")[0], node.lineno


def _in_world(module: str) -> bool:
    return module == "tools.world" or module.startswith("tools.world.")


def test_tools_world_stands_on_pydantic_and_the_standard_library_only() -> None:
    world = [module for module in MODULES if _in_world(module)]
    assert "tools.world.store" in world
    ours = [
        f"{module} imports {target}"
        for module in world
        for target in GRAPH[module]
        if not _in_world(target)
    ]
    outside = [
        f"{module} (line {line}) imports {name}"
        for module in world
        for name, line in _third_party_imports(MODULES[module])
        if name != "pydantic" and name not in sys.stdlib_module_names
    ]
    assert ours + outside == []


def test_sim_imports_neither_agent_nor_tools() -> None:
    assert _violations(lambda m, t: _top(m) != "sim" or _top(t) == "sim") == []


@pytest.mark.parametrize("room", sorted(AGENT_ROOMS))
def test_each_agent_room_imports_only_the_rooms_below_it(room: str) -> None:
    allowed_rooms = AGENT_ROOMS[room]

    def allowed(module: str, target: str) -> bool:
        if _room(module) != room or allowed_rooms is None or _top(target) != "agent":
            return True
        return _room(target) in {room, *allowed_rooms}

    assert _violations(allowed) == []


def test_the_agent_package_itself_imports_no_room() -> None:
    assert [t for t in GRAPH["agent"] if _top(t) == "agent"] == []


def test_no_import_cycle_between_modules() -> None:
    cycles = [component for component in _components() if len(component) > 1]
    assert cycles == [], "import cycles: " + "; ".join(" → ".join(c) for c in cycles)


def _components() -> list[list[str]]:
    """Strongly connected components of the import graph (Tarjan), each as a path round it."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for target in GRAPH[node]:
            if target not in index:
                visit(target)
                low[node] = min(low[node], low[target])
            elif target in on_stack:
                low[node] = min(low[node], index[target])
        if low[node] == index[node]:
            component: list[str] = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                component.append(member)
                if member == node:
                    break
            found.append(sorted(component))

    for node in sorted(GRAPH):
        if node not in index:
            visit(node)
    return found


# tools/deploy/'s stages, each with the stages it may import; anything else there is its root
DEPLOY_STAGES: dict[str, set[str]] = {
    "plan": {"proof", "rollout", "launch", "fabric", "root"},
    "proof": {"rollout", "root"},
    "rollout": {"launch", "fabric", "root"},
    "launch": {"fabric", "root"},
    "fabric": {"root"},
    "root": set(),
}


def _stage(module: str) -> str | None:
    """The deploy stage a module of tools/deploy/ is in ("root" at its top), else None."""
    parts = module.split(".")
    if parts[:2] != ["tools", "deploy"]:
        return None
    return parts[2] if len(parts) > 2 and parts[2] in DEPLOY_STAGES else "root"


def test_the_graph_sees_every_deploy_stage() -> None:
    assert {_stage(module) for module in MODULES} - {None} == set(DEPLOY_STAGES)


@pytest.mark.parametrize("stage", sorted(DEPLOY_STAGES))
def test_each_deploy_stage_imports_only_the_stages_after_it(stage: str) -> None:
    def allowed(module: str, target: str) -> bool:
        if _stage(module) != stage or _stage(target) is None:
            return True
        return _stage(target) in {stage, *DEPLOY_STAGES[stage]}

    assert _violations(allowed) == []
