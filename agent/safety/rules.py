"""Allow / ask / deny rules for tool calls, e.g. `ssh_exec(host=spark-*, command="nvidia-smi*")`.

A rule names a tool (or `*`) and, optionally, glob patterns for input fields. A field pattern
matches when the field's text matches it; `host` also matches any name in the call's hosts. Rules
come from the settings file and from the operator during a session; nothing the model or a web
page says can add one.
"""

from __future__ import annotations

import fnmatch
import re
import shlex
from dataclasses import dataclass, field
from typing import Any, Literal

RuleEffect = Literal["allow", "ask", "deny"]

_RULE = re.compile(r"^\s*(?P<tool>[A-Za-z0-9_*-]+)\s*(?:\((?P<args>.*)\))?\s*$", re.S)


class RuleError(ValueError):
    """A rule that does not parse; the message shows the expected form."""


@dataclass(frozen=True)
class Rule:
    effect: RuleEffect
    tool: str
    fields: tuple[tuple[str, str], ...] = ()
    source: str = "settings"
    text: str = ""

    @classmethod
    def parse(cls, effect: RuleEffect, text: str, source: str = "settings") -> Rule:
        match = _RULE.match(text)
        if not match:
            raise RuleError(
                f"cannot read rule {text!r}; write it as tool(field=pattern, ...), for example "
                'ssh_exec(host=spark-*, command="nvidia-smi*")'
            )
        fields: list[tuple[str, str]] = []
        args = (match.group("args") or "").strip()
        if args:
            lexer = shlex.shlex(args, posix=True)
            lexer.whitespace = ","
            lexer.whitespace_split = True
            for part in lexer:
                key, sep, pattern = part.strip().partition("=")
                if not sep or not key.strip():
                    raise RuleError(f"rule {text!r}: expected field=pattern, got {part.strip()!r}")
                fields.append((key.strip(), pattern.strip()))
        return cls(effect, match.group("tool"), tuple(fields), source, text.strip())

    def matches(self, tool: str, tool_input: dict[str, Any], hosts: list[str]) -> bool:
        if not fnmatch.fnmatchcase(tool, self.tool):
            return False
        for key, pattern in self.fields:
            values = _field_values(key, tool_input, hosts)
            if not values or not all(fnmatch.fnmatchcase(v, pattern) for v in values):
                return False
        return True


def _field_values(key: str, tool_input: dict[str, Any], hosts: list[str]) -> list[str]:
    if key == "host" and hosts:
        return list(hosts)
    value = tool_input.get(key)
    if value is None:
        return []
    if isinstance(value, list):
        return [str(item) for item in value]
    return [str(value)]


@dataclass
class RuleSet:
    """Rules checked deny first, then ask, then allow; the first match of the first kind wins."""

    rules: list[Rule] = field(default_factory=list)

    @classmethod
    def from_config(cls, config: dict[str, list[str]] | None, source: str = "settings") -> RuleSet:
        rules: list[Rule] = []
        for effect in ("deny", "ask", "allow"):
            for text in (config or {}).get(effect, []) or []:
                rules.append(Rule.parse(effect, text, source))
        return cls(rules)

    def add(self, rule: Rule) -> None:
        self.rules.append(rule)

    def allow_for_session(self, rule_text: str) -> Rule:
        """The operator's `a` answer: allow calls like this one for the rest of the session."""
        rule = Rule.parse("allow", rule_text, source="operator (this session)")
        self.add(rule)
        return rule

    def first_match(self, tool: str, tool_input: dict[str, Any], hosts: list[str]) -> Rule | None:
        for effect in ("deny", "ask", "allow"):
            for rule in self.rules:
                if rule.effect == effect and rule.matches(tool, tool_input, hosts):
                    return rule
        return None
