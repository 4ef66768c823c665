"""Tools by name, in a stable order, so the request prefix stays byte-identical for caching."""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import Any

from tools.base import Tool


class ToolRegistry:
    def __init__(self, tools: Iterable[Tool] = ()) -> None:
        self._tools: dict[str, Tool] = {}
        for tool in tools:
            self.add(tool)

    def add(self, tool: Tool) -> None:
        if tool.name in self._tools:
            raise ValueError(f"tool {tool.name!r} registered twice")
        self._tools[tool.name] = tool

    def get(self, name: str) -> Tool | None:
        return self._tools.get(name)

    def names(self) -> list[str]:
        return list(self._tools)

    def __iter__(self) -> Iterator[Tool]:
        return iter(self._tools.values())

    def __len__(self) -> int:
        return len(self._tools)

    def plan_approvers(self) -> frozenset[str]:
        """The names of the tools whose calls ask for a plan's approval (`approves_plan`)."""
        return frozenset(tool.name for tool in self._tools.values() if tool.approves_plan)

    def definitions(self) -> list[dict[str, Any]]:
        return [tool.definition() for tool in self._tools.values()]
