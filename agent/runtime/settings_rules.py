"""The settings' rules as a session holds them, read one way for a session and for
`scout policy check`, so that the check answers what the session would.

Each rule is held to the tools Scout has (`tools.catalog.SCOUT_TOOLS`, and any other tool the
session brings): its tool and fields must be theirs, and an allow rule must name what its tool's
`RuleShape` says an allow rule names (agent/safety/rules.py).
"""

from __future__ import annotations

from collections.abc import Iterable

from agent.runtime.settings import SettingsError
from agent.safety.rules import RuleError, RuleSet
from tools.base import Tool
from tools.catalog import SCOUT_TOOLS


def settings_rules(
    config: dict[str, list[str]] | None, tools: Iterable[Tool | type[Tool]] = ()
) -> RuleSet:
    """The settings' rules (`Settings.rules`); SettingsError naming the first rule that Scout
    cannot hold, as a session refuses to start on it."""
    try:
        return read_rules(config, tools)
    except RuleError as exc:
        raise SettingsError(f"settings: rules: {exc}") from None


def read_rules(
    config: dict[str, list[str]] | None,
    tools: Iterable[Tool | type[Tool]] = (),
    source: str = "settings",
) -> RuleSet:
    """The rules `config` holds (allow/ask/deny lists), each marked with `source`; RuleError
    naming the first rule that Scout cannot hold."""
    known = {tool.name: tool for tool in (*SCOUT_TOOLS, *tools)}
    shapes = {name: tool.rule_shape for name, tool in known.items()}
    vocabulary = {name: tool.rule_fields() for name, tool in known.items()}
    return RuleSet.from_config(config, source, shapes, vocabulary)
