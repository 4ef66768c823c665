"""The rule an operator's `a` ("allow like this") adds: exactly this call, never a wider one.

It names the tool, the hosts (each one: `host=spark-a|spark-b`, never `*`) and the call's
command as a pattern that covers only that command (`command_patterns.exact_pattern`), then the
fields an allow rule must name by the tool's declared shape (`tools.base.RuleShape`: its
required fields and every field set that it does not leave open). A call that no rule can state
exactly (a compound command, a command with a substitution, an `env` whose values would have to
be written into the rule, a tool that declared no shape) gets no `a` at all.
"""

from __future__ import annotations

import re
from typing import Any

from agent.safety.approvals import ApprovalRequest
from agent.safety.command_patterns import exact_pattern, simple_commands
from agent.safety.rules import command_text
from tools.base import RuleShape

SCALARS = (str, int, float, bool)
PLAIN = re.compile(r"[A-Za-z0-9_./:@%+|-]+")
GLOB = re.compile(r"[*?\[]")


def session_rule(request: ApprovalRequest, shape: RuleShape | None) -> str | None:
    """The rule text for `a`, or None when no rule can say exactly this call (`shape`: what
    the request's tool declared a rule must name; None when it declared nothing)."""
    if shape is None or request.is_plan:
        return None
    fields: list[str] = []
    if request.hosts:
        if any("|" in host for host in request.hosts):
            return None
        fields.append(f"host={_quoted('|'.join(request.hosts))}")
    text = command_text(request.input)
    if text is not None:
        commands = simple_commands(text)
        if not commands or len(commands) != 1 or not commands[0].plain:
            return None
        fields.append(f"command={_quoted(exact_pattern(commands[0].argv))}")
    named = _named_fields(shape, request.input)
    if named is None:
        return None
    fields += named
    return f"{request.tool}({', '.join(fields)})" if fields else request.tool


def _named_fields(shape: RuleShape, tool_input: dict[str, Any]) -> list[str] | None:
    """`field=value` for each field the shape says a rule must name (host and command are
    written above); None when one cannot be written as exactly itself."""
    if any(tool_input.get(key) is None for key in shape.required):
        return None
    wanted = (shape.set_fields(tool_input) | set(shape.required)) - {"host", "command"}
    fields: list[str] = []
    for key, value in tool_input.items():
        if key not in wanted:
            continue
        if not isinstance(value, SCALARS) or "|" in str(value):
            return None
        shown = str(value).lower() if isinstance(value, bool) else str(value)
        if key in shape.required and GLOB.search(shown):
            return None  # a required field is named by a literal; this value reads as a glob
        fields.append(f"{key}={_quoted(_literal(shown))}")
    return fields


def _literal(value: str) -> str:
    """A field value that fnmatch reads as exactly itself."""
    return "".join(f"[{c}]" if c in "*?[" else c for c in value)


def _quoted(value: str) -> str:
    if PLAIN.fullmatch(value):
        return value
    escaped = value.replace("\\", "\\\\").replace('"', '\\"')
    return f'"{escaped}"'
