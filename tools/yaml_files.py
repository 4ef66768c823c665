"""Reading a YAML file so that a syntax error reads as one sentence: line, column, what is wrong.

PyYAML's own message cites `"<unicode string>"` and draws a caret under a copy of the line; the
callers (inventory, settings) put the file's name in front of what this returns.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml


class YAMLSyntaxError(ValueError):
    """The text is not valid YAML; `str()` is `line L, column C: what the parser expected`."""


def read_yaml(path: Path) -> Any:
    """The parsed file; OSError as raised by reading it, YAMLSyntaxError for bad syntax."""
    text = path.read_text(encoding="utf-8")
    try:
        return yaml.safe_load(text)
    except yaml.YAMLError as exc:
        raise YAMLSyntaxError(describe_yaml_error(exc)) from None


def describe_yaml_error(exc: yaml.YAMLError) -> str:
    mark = getattr(exc, "problem_mark", None)
    problem = getattr(exc, "problem", None) or str(exc).splitlines()[0]
    where = f"line {mark.line + 1}, column {mark.column + 1}: " if mark is not None else ""
    context = getattr(exc, "context", None)
    context_mark = getattr(exc, "context_mark", None)
    if context and context_mark is not None:
        problem += f" ({context} that starts on line {context_mark.line + 1})"
    elif context:
        problem += f" ({context})"
    return where + problem
