"""Every tool the model can call refuses a field it does not know: a misspelt or invented field is
an error the model reads, never a call that quietly runs with its defaults (recon once ran on
all hosts with an input that held none of its fields)."""

import importlib
import inspect
from pathlib import Path

import pytest
from pydantic import ValidationError

from tools.base import Tool

ROOT = Path(__file__).resolve().parents[2] / "tools"


def _tools() -> list[type[Tool]]:
    found: dict[str, type[Tool]] = {}
    for path in sorted(ROOT.glob("*.py")):
        module = importlib.import_module(f"tools.{path.stem}")
        for _, cls in inspect.getmembers(module, inspect.isclass):
            if (
                issubclass(cls, Tool)
                and not inspect.isabstract(cls)
                and cls.__module__ == module.__name__
            ):
                found[cls.name] = cls
    return [found[name] for name in sorted(found)]


def test_every_tool_at_the_root_is_found() -> None:
    names = {tool.name for tool in _tools()}
    assert {"ssh_exec", "recon", "rollout_step", "plan_deployment", "todo_write"} <= names


@pytest.mark.parametrize("tool", _tools(), ids=lambda tool: tool.name)
def test_an_unknown_field_is_refused(tool: type[Tool]) -> None:
    with pytest.raises(ValidationError) as caught:
        tool.Input.model_validate({"no_such_field_anywhere": 1})
    assert "extra_forbidden" in {error["type"] for error in caught.value.errors()}
