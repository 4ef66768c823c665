"""The small part of Go templates that `docker --format` users write: `{{.A.B}}`, `{{json .X}}`."""

from __future__ import annotations

import json
import re
from typing import Any

_ACTION = re.compile(r"\{\{\s*(json\s+)?\.([A-Za-z0-9_.]*)\s*\}\}")


def go_json(value: Any) -> str:
    """json.Marshal style: compact, non-ASCII kept, <, > and & escaped as Go does."""
    text = json.dumps(value, separators=(",", ":"), ensure_ascii=False)
    return text.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")


def _lookup(obj: Any, path: str) -> Any:
    for part in filter(None, path.split(".")):
        obj = obj.get(part, "<no value>") if isinstance(obj, dict) else "<no value>"
    return obj


def _plain(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, list):
        return "[" + " ".join(_plain(v) for v in value) + "]"
    if isinstance(value, dict):
        return "map[" + " ".join(f"{k}:{_plain(v)}" for k, v in sorted(value.items())) + "]"
    return str(value)


def render(template: str, obj: dict[str, Any]) -> str:
    template = template.replace("\\t", "\t").replace("\\n", "\n")

    def action(match: re.Match[str]) -> str:
        value = _lookup(obj, match.group(2))
        return go_json(value) if match.group(1) else _plain(value)

    return _ACTION.sub(action, template)


def table(rows: list[list[str]]) -> str:
    """Go tabwriter as the docker CLI sets it up: min width 10, padding 3, last column free."""
    widths = [max(10, *(len(row[i]) + 3 for row in rows)) for i in range(len(rows[0]) - 1)]
    lines = [
        "".join(cell.ljust(w) for cell, w in zip(row, widths, strict=False)) + row[-1]
        for row in rows
    ]
    return "\n".join(lines) + "\n"
