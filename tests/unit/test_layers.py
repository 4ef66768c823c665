"""Imports run one way: faces → runtime/replay → safety/world → loop → tools; sim stands apart.

Every module of agent/, tools/ and sim/ is parsed with `ast`, imports inside functions and
`TYPE_CHECKING` blocks included, and each import is resolved to the module it loads.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PACKAGES = ("agent", "tools", "sim")
# Inside agent/: the rooms each room may import besides itself (and tools/).
AGENT_ROOMS: dict[str, set[str] | None] = {
    "faces": None,  # anything below it
    "replay": {"runtime", "safety", "world", "loop"},
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
