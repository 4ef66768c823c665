"""A tool's input schema as the model reads it: pydantic's JSON schema minus what says nothing.

Every request carries every tool's schema, so bytes here are paid on every turn. Titles repeat
the property names; `anyOf: [X, {"type": "null"}]` with `default: null` only says the field may
be left out, which not being `required` already says. Both go; everything that constrains or
explains a value stays. The pydantic model still validates the input (None included).
"""

from __future__ import annotations

from typing import Any

SCHEMA_MAPS = frozenset({"properties", "$defs", "patternProperties"})
NULL = {"type": "null"}


def compact_schema(node: Any) -> Any:
    if isinstance(node, list):
        return [compact_schema(item) for item in node]
    if not isinstance(node, dict):
        return node
    out: dict[str, Any] = {}
    for key, value in node.items():
        if key == "title":
            continue
        if key in SCHEMA_MAPS and isinstance(value, dict):  # names here are fields, keep them
            out[key] = {name: compact_schema(sub) for name, sub in value.items()}
        else:
            out[key] = compact_schema(value)
    alternatives = out.get("anyOf")
    if isinstance(alternatives, list) and NULL in alternatives and out.get("default", 0) is None:
        rest = [item for item in alternatives if item != NULL]
        del out["anyOf"], out["default"]
        out = {**rest[0], **out} if len(rest) == 1 else {"anyOf": rest, **out}
    return out
