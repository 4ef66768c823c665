"""The session's todo list and the `todo_write` tool through which the model replaces it."""

from __future__ import annotations

from collections.abc import Callable
from typing import Literal

from pydantic import BaseModel, Field, field_validator

from tools.base import Tool, ToolContext, ToolResult

TodoStatus = Literal["pending", "in_progress", "completed", "blocked"]

_MARKS: dict[str, str] = {
    "pending": "[ ]",
    "in_progress": "[>]",
    "completed": "[x]",
    "blocked": "[!]",
}


class TodoItem(BaseModel):
    content: str = Field(min_length=1, max_length=300, description="What to do, imperative.")
    status: TodoStatus = "pending"
    note: str | None = Field(default=None, max_length=300, description="Why blocked, or a result.")


class TodoList:
    """The whole list; replaced at once so the model's picture and ours never diverge."""

    def __init__(self, on_change: Callable[[list[TodoItem]], None] | None = None) -> None:
        self.items: list[TodoItem] = []
        self.on_change = on_change

    def replace(self, items: list[TodoItem]) -> None:
        self.items = list(items)
        if self.on_change is not None:
            self.on_change(self.items)

    def render(self) -> str:
        """Compact text for the model and the plain faces: one line per item."""
        if not self.items:
            return "(todo list is empty)"
        lines = []
        for item in self.items:
            line = f"{_MARKS[item.status]} {item.content}"
            if item.note:
                line += f" — {item.note}"
            lines.append(line)
        done = sum(item.status == "completed" for item in self.items)
        lines.append(f"({done}/{len(self.items)} done)")
        return "\n".join(lines)


class TodoWriteInput(BaseModel):
    items: list[TodoItem] = Field(description="The complete new list, in order.")

    @field_validator("items")
    @classmethod
    def _one_in_progress(cls, items: list[TodoItem]) -> list[TodoItem]:
        active = [item.content for item in items if item.status == "in_progress"]
        if len(active) > 1:
            raise ValueError(
                f"{len(active)} items are in_progress ({'; '.join(active)}); mark at most one"
            )
        return items


class TodoWriteTool(Tool[TodoWriteInput]):
    name = "todo_write"
    description = (
        "Replace the session's todo list: send every item each time, at most one in_progress. "
        "Plans multi-step work and shows progress."
    )
    Input = TodoWriteInput

    def __init__(self, todo: TodoList) -> None:
        self.todo = todo

    def summary(self, params: TodoWriteInput) -> str:
        return f"{len(params.items)} item" + ("" if len(params.items) == 1 else "s")

    async def run(self, params: TodoWriteInput, ctx: ToolContext) -> ToolResult:
        self.todo.replace(params.items)
        return ToolResult(
            text=self.todo.render(),
            data={"items": [item.model_dump() for item in params.items]},
        )
