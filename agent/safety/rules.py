"""Allow / ask / deny rules for tool calls: `ssh_exec(host=spark-*, command="docker restart x_*")`.

A rule names a tool and, optionally, patterns for input fields; `a|b` lists alternatives. `host`
matches when every host of the call does. `command` is matched against the parsed command
(`command_patterns`): an allow rule covers a line only when each of its simple commands is
covered by an allow rule, word for word, a `*` inside one argument (README: "Rule patterns").
Deny and ask rules are the careful direction: they match when any command the line would run
(even inside `sudo` or `sh -c`) fits, or when the text itself does. What an allow rule must
name is the tool's own declaration (`tools.base.RuleShape`, given by the session's tools): the
fields it requires, and every field the call sets that the tool does not leave open. A tool
with no declaration here is covered by no allow rule. Given the tools' vocabulary (each tool's
name and the fields a rule may name, `Tool.rule_fields`), a rule naming a tool or a field that is
not there is refused when it is read: such a rule would match nothing, and a deny rule that
matches nothing lets the call through. Rules come from the settings file and from the operator
during a session; nothing the model or a web page says can add one.
"""

from __future__ import annotations

import fnmatch
import re
import shlex
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

from agent.safety.command_patterns import CommandPattern, PatternError, simple_commands
from agent.safety.shell.classifier import commands_run
from agent.safety.word_globs import matches
from tools.base import RuleShape

RuleEffect = Literal["allow", "ask", "deny"]
#: each tool's RuleShape by tool name, as the session's tools declare them
Shapes = Mapping[str, RuleShape]
#: the fields a rule may name, by tool name
Vocabulary = Mapping[str, frozenset[str]]

_RULE = re.compile(r"^\s*(?P<tool>[A-Za-z0-9_*-]+)\s*(?:\((?P<args>.*)\))?\s*$", re.S)


class RuleError(ValueError):
    """A rule that does not parse; the message shows the expected form."""


@dataclass(frozen=True)
class ApprovalRule:
    effect: RuleEffect
    tool: str
    fields: tuple[tuple[str, str], ...] = ()
    source: str = "settings"
    text: str = ""
    command: CommandPattern | None = None

    @classmethod
    def parse(
        cls,
        effect: RuleEffect,
        text: str,
        source: str = "settings",
        shapes: Shapes | None = None,
        vocabulary: Vocabulary | None = None,
    ) -> ApprovalRule:
        """The rule, or a RuleError; with `shapes`, an allow rule for a known tool must name
        the fields that tool requires (a rule for a tool not among them parses and covers
        nothing until such a tool is there: no allow rule covers a tool without a shape); with
        `vocabulary`, its tool and each field it names must be there."""
        match = _RULE.match(text)
        if not match:
            raise RuleError(
                f"cannot read rule {text!r}; write it as tool(field=pattern, ...), for example "
                'ssh_exec(host=spark-*, command="nvidia-smi *")'
            )
        fields = _fields(text, (match.group("args") or "").strip())
        tool = match.group("tool")
        if vocabulary is not None:
            _refuse_unknown_names(text, tool, fields, vocabulary)
        command = None
        pattern = dict(fields).get("command")
        if pattern is not None:
            try:
                command = CommandPattern.parse(pattern)
            except PatternError as exc:
                if effect == "allow":  # deny and ask rules may match text too (`*reboot*`)
                    raise RuleError(f"rule {text!r}: {exc}") from None
        shape = (shapes or {}).get(tool)
        unnamed = _unnamed_required(shape, fields) if effect == "allow" and shape else []
        if unnamed:
            example = f", for example {shape.example}" if shape and shape.example else ""
            raise RuleError(
                f"rule {text!r}: a {tool} allow rule must name the {unnamed[0]}{example}"
            )
        return cls(effect, tool, tuple(fields), source, text.strip(), command)

    def fits(self, tool: str, tool_input: dict[str, Any], hosts: list[str]) -> bool:
        """The tool and every field other than `command` match (in an allow rule, a wildcard
        inside one value only, as in a command: `word_globs`)."""
        if not fnmatch.fnmatchcase(tool, self.tool):
            return False
        for key, pattern in self.fields:
            if key == "command":
                continue
            values = _field_values(key, tool_input, hosts)
            if isinstance(tool_input.get(key), bool):  # `force=true` as the `a` rule writes it
                pattern = pattern.lower()
            if not values or not all(_field_fits(self.effect, v, pattern) for v in values):
                return False
        return True

    def names_every_field_of(self, shape: RuleShape, tool_input: dict[str, Any]) -> bool:
        """An allow rule covers a setting it does not name (an env, a folder, a docker flag)
        never: it names the tool's required fields literally and every field the call sets
        that the tool's shape does not leave open."""
        named = {key for key, _ in self.fields}
        return not _unnamed_required(shape, self.fields) and shape.set_fields(tool_input) <= named


def _fields(text: str, args: str) -> list[tuple[str, str]]:
    """`field=pattern` pairs split on commas outside quotes; RuleError naming the rule when
    they cannot be (a quote left open, a part without `=`, a field named twice)."""
    lexer = shlex.shlex(args, posix=True)
    lexer.whitespace = ","
    lexer.whitespace_split = True
    try:
        parts = list(lexer) if args else []
    except ValueError as exc:  # shlex: "No closing quotation", "No escaped character"
        problem = {"No closing quotation": "a quote is not closed"}.get(str(exc), str(exc))
        raise RuleError(f"rule {text!r}: {problem}") from None
    fields: list[tuple[str, str]] = []
    for part in parts:
        key, sep, pattern = part.strip().partition("=")
        if not sep or not key.strip():
            raise RuleError(f"rule {text!r}: expected field=pattern, got {part.strip()!r}")
        if key.strip() in dict(fields):
            raise RuleError(f"rule {text!r}: names the field {key.strip()!r} twice")
        fields.append((key.strip(), pattern.strip()))
    return fields


def _refuse_unknown_names(
    text: str, tool: str, fields: Iterable[tuple[str, str]], vocabulary: Vocabulary
) -> None:
    """RuleError unless the tool pattern matches a tool and each field is one of its fields
    (for a wildcard tool, a field of at least one tool it matches)."""
    tools = [name for name in vocabulary if fnmatch.fnmatchcase(name, tool)]
    if not tools:
        known = ", ".join(sorted(vocabulary))
        raise RuleError(f"rule {text!r}: there is no tool {tool!r} (the tools: {known})")
    known_fields = frozenset().union(*(vocabulary[name] for name in tools))
    for key, _ in fields:
        if key in known_fields:
            continue
        if tools != [tool]:  # a wildcard: the fields of every tool it matches are too many
            raise RuleError(f"rule {text!r}: no tool that {tool!r} matches has a field {key!r}")
        listed = ", ".join(sorted(known_fields))
        raise RuleError(f"rule {text!r}: {tool} has no field {key!r} (its fields: {listed})")


def _unnamed_required(shape: RuleShape, fields: Iterable[tuple[str, str]]) -> list[str]:
    """The fields an allow rule must name that it does not: each `required` one by one literal
    value (`action=*` names none), each `named` one by any pattern."""
    named = dict(fields)
    literal = [
        key for key in shape.required if not named.get(key) or re.search(r"[*?\[]", named[key])
    ]
    return literal + [key for key in shape.named if not named.get(key)]


def _field_fits(effect: RuleEffect, value: str, pattern: str) -> bool:
    options = pattern.split("|")
    if effect == "allow":
        return any(matches(option, value) for option in options)
    return any(fnmatch.fnmatchcase(value, option) for option in options)


def _field_values(key: str, tool_input: dict[str, Any], hosts: list[str]) -> list[str]:
    if key == "host" and hosts:
        return list(hosts)
    value = tool_input.get(key)
    if value is None:
        return []
    if isinstance(value, bool):
        return ["true" if value else "false"]
    if isinstance(value, list):
        return [str(item) for item in value]
    return [str(value)]


def command_text(tool_input: dict[str, Any]) -> str | None:
    """The shell text of a call's `command` (a docker_ctl argv list is joined like a shell)."""
    value = tool_input.get("command")
    if isinstance(value, list):
        return shlex.join(str(word) for word in value)
    return value if isinstance(value, str) else None


@dataclass
class RuleSet:
    """Rules checked deny first, then ask, then allow."""

    rules: list[ApprovalRule] = field(default_factory=list)
    shapes: Shapes = field(default_factory=dict)

    @classmethod
    def from_config(
        cls,
        config: dict[str, list[str]] | None,
        source: str = "settings",
        shapes: Shapes | None = None,
        vocabulary: Vocabulary | None = None,
    ) -> RuleSet:
        rules: list[ApprovalRule] = []
        for effect in ("deny", "ask", "allow"):
            for text in (config or {}).get(effect, []) or []:
                rules.append(ApprovalRule.parse(effect, text, source, shapes, vocabulary))
        return cls(rules, dict(shapes or {}))

    def add(self, rule: ApprovalRule) -> None:
        self.rules.append(rule)

    def careful_match(
        self, effect: RuleEffect, tool: str, tool_input: dict[str, Any], hosts: list[str]
    ) -> ApprovalRule | None:
        """The first deny (or ask) rule for this call: any command it runs may match."""
        text = command_text(tool_input)
        for rule in self.rules:
            if rule.effect != effect or not rule.fits(tool, tool_input, hosts):
                continue
            pattern = dict(rule.fields).get("command")
            if pattern is None or (text is not None and _any_command_fits(rule, pattern, text)):
                return rule
        return None

    def allow_for_session(self, rule_text: str) -> ApprovalRule:
        """The operator's `a` answer: allow calls exactly like this one for the session."""
        rule = ApprovalRule.parse("allow", rule_text, "operator (this session)", self.shapes)
        self.add(rule)
        return rule

    def covering_allows(
        self, tool: str, tool_input: dict[str, Any], hosts: list[str]
    ) -> list[ApprovalRule] | None:
        """The allow rules that together cover the whole call, or None when something is left
        (always for a tool that declared no shape)."""
        shape = self.shapes.get(tool)
        if shape is None:
            return None
        allows = [
            rule
            for rule in self.rules
            if rule.effect == "allow"
            and rule.fits(tool, tool_input, hosts)
            and rule.names_every_field_of(shape, tool_input)
        ]
        whole = next((rule for rule in allows if rule.command is None), None)
        if whole is not None:
            return [whole]
        text = command_text(tool_input)
        commands = simple_commands(text) if text is not None else None
        if not commands:
            return None
        used: list[ApprovalRule] = []
        for command in commands:
            rule = next((r for r in allows if r.command and r.command.covers(command)), None)
            if rule is None:
                return None
            used.append(rule)
        return list(dict.fromkeys(used))


def _any_command_fits(rule: ApprovalRule, pattern: str, text: str) -> bool:
    if fnmatch.fnmatchcase(text, pattern):
        return True
    if rule.command is None:
        return False
    return any(rule.command.reaches(argv) for argv in commands_run(text))
