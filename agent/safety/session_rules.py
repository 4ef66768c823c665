"""The rule an operator's `a` ("allow like this") adds: exactly this call, never a wider one.

It names the tool, the hosts (each one: `host=spark-a|spark-b`, never `*`) and the call's
command as a pattern that covers only that command (`command_patterns.exact_pattern`); a
`docker_ctl` rule names the action and every field the call sets. A call that no rule can state
exactly (a compound command, a command with a substitution, an `env` whose values would have to
be written into the rule) gets no `a` at all.
"""

from __future__ import annotations

import re
from typing import Any

from agent.safety.approvals import ApprovalRequest
from agent.safety.command_patterns import exact_pattern, simple_commands
from agent.safety.rules import DOCKER_DEFAULTS, DOCKER_TUNING, command_text

SCALARS = (str, int, float, bool)
PLAIN = re.compile(r"[A-Za-z0-9_./:@%+|-]+")


def session_rule(request: ApprovalRequest) -> str | None:
    """The rule text for `a`, or None when no rule can say exactly this call."""
    if request.tool in ("propose_plan",) or request.input.get("env"):
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
    named = _named_fields(request.tool, request.input)
    if named is None:
        return None
    fields += named
    return f"{request.tool}({', '.join(fields)})" if fields else request.tool


def _named_fields(tool: str, tool_input: dict[str, Any]) -> list[str] | None:
    skip = {"host", "hosts", "command", "timeout"} if tool == "ssh_exec" else {"host", "command"}
    fields: list[str] = []
    for key, value in tool_input.items():
        if key in skip or value is None:
            continue
        if tool == "docker_ctl" and (key in DOCKER_TUNING - {"action"} or
                                     value == DOCKER_DEFAULTS.get(key)):  # fmt: skip
            continue
        if not isinstance(value, SCALARS) or "|" in str(value):
            return None
        shown = str(value).lower() if isinstance(value, bool) else str(value)
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
