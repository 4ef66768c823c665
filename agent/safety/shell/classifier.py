"""How risky a shell command is: read-only only when every part is provably read-only.

The command is parsed (not pattern-matched), every simple command in it is judged by its rule,
and whatever it runs in turn (`$(…)`, `bash -c`, `sudo`, `ssh host '…'`, `docker exec`, `xargs`,
`find -exec`, here-documents fed to a shell) is judged the same way. The worst part wins, and the
reasons name the parts that decided it.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass

from agent.safety.shell.command_rules import arguments_are_data, command_name, rule_for
from agent.safety.shell.outcomes import RunsCommand, RunsScript, RunsStdin, Verdict
from agent.safety.shell.paths import is_harmless_sink, is_system_path
from agent.safety.shell.rules_launch import risky_assignment
from agent.safety.shell.shell_parse import (
    Command,
    Redirect,
    RuntimeText,
    ShellSyntaxError,
    Word,
    parse_script,
)
from tools.base import Risk

MAX_DEPTH = 12
PathExists = Callable[[str], bool | None]
VARIABLE_RE = re.compile(r"\$(?:\{([A-Za-z_][A-Za-z0-9_]*)\}|([A-Za-z_][A-Za-z0-9_]*))")
TRUNCATING = frozenset({">", ">|", "&>"})
APPENDING = frozenset({">>", "&>>"})
DECLARING = frozenset({"export", "declare", "readonly", "local", "typeset"})


@dataclass(frozen=True)
class Classification:
    """The verdict on one command line: its risk and the reasons that decided it."""

    risk: Risk
    reasons: list[str]

    @property
    def label(self) -> str:
        return self.risk.label


@dataclass(frozen=True)
class _Stdin:
    """What a command reads on stdin: a terminal, a pipe, a file, or known text (here-doc)."""

    kind: str
    text: str = ""


TERMINAL = _Stdin("terminal")


def classify_command(cmd: str, *, path_exists: PathExists | None = None) -> Classification:
    """Classify one shell command line.

    `path_exists` may say whether a file already exists on the target (True/False) or that it
    cannot tell (None); without it every `>` target counts as possibly existing, so truncating it
    is destructive.
    """
    findings = _Judge(path_exists).source(cmd, via=(), depth=0)
    worst = max(f.risk for f in findings)
    reasons = list(dict.fromkeys(f.reason for f in findings if f.risk == worst))
    return Classification(worst, reasons)


class _Judge:
    def __init__(self, path_exists: PathExists | None) -> None:
        self.path_exists = path_exists

    def source(self, text: str, *, via: tuple[str, ...], depth: int) -> list[Verdict]:
        where = _where(via)
        if depth > MAX_DEPTH:
            return [
                Verdict(Risk.MUTATING, f"nested too deeply to follow{where}; treated as mutating")
            ]
        try:
            script = parse_script(text)
        except ShellSyntaxError as error:
            return [Verdict(Risk.MUTATING, f"could not parse{where}: {error}; treated as mutating")]
        if not script.commands:
            return [Verdict(Risk.READ_ONLY, f"nothing to run{where}")]
        variables: dict[str, str | None] = {}
        findings: list[Verdict] = []
        for command in script.commands:
            findings.extend(self.command(command, variables, via, depth))
        return findings

    def command(
        self, command: Command, variables: dict[str, str | None], via: tuple[str, ...], depth: int
    ) -> list[Verdict]:
        findings: list[Verdict] = []
        for inner in command.substitutions:
            findings.extend(self.source(inner, via=(*via, "$(…)"), depth=depth + 1))
        for redirect in command.redirects:
            findings.extend(self.redirect(redirect, variables, via))
        for word in command.assignments:
            if verdict := risky_assignment(word.text):
                findings.append(Verdict(verdict.risk, verdict.reason + _where(via)))
        argv: list[str] = []
        for word in command.words:
            argv.extend(_expand(word, variables))
        if not argv:
            _remember(command.assignments, variables, command.nested)
            return findings or [Verdict(Risk.READ_ONLY, "only sets shell variables")]
        if argv[0] in DECLARING:
            declared = [w for w in command.words[1:] if w.assignment]
            for word in declared:
                if verdict := risky_assignment(word.text):
                    findings.append(Verdict(verdict.risk, verdict.reason + _where(via)))
            _remember(tuple(declared), variables, command.nested)
        findings.extend(self.argv(argv, _stdin_of(command), via, depth))
        return findings

    def argv(
        self, argv: list[str], stdin: _Stdin, via: tuple[str, ...], depth: int
    ) -> list[Verdict]:
        where = _where(via)
        if depth > MAX_DEPTH:
            return [
                Verdict(Risk.MUTATING, f"nested too deeply to follow{where}; treated as mutating")
            ]
        word = argv[0]
        if isinstance(word, RuntimeText):
            return [
                Verdict(Risk.MUTATING, f"the command name {word} is only known at run time{where}")
            ]
        name = command_name(word)
        rule = rule_for(name) if name else None
        if name is None or rule is None:
            return [Verdict(Risk.MUTATING, f"'{word}' is not on the read-only list{where}")]
        args = argv[1:]
        findings: list[Verdict] = []
        outcomes = rule(name, args)
        for outcome in outcomes:
            if isinstance(outcome, Verdict):
                findings.append(Verdict(outcome.risk, outcome.reason + where))
            elif isinstance(outcome, RunsCommand):
                findings.extend(
                    self.argv(list(outcome.argv), stdin, (*via, outcome.via), depth + 1)
                )
            elif isinstance(outcome, RunsScript):
                findings.extend(
                    self.source(outcome.source, via=(*via, outcome.via), depth=depth + 1)
                )
            elif isinstance(outcome, RunsStdin):
                findings.extend(self.stdin(stdin, (*via, outcome.via), depth))
        dynamic = next((a for a in args if isinstance(a, RuntimeText)), None)
        judged_itself = all(isinstance(o, Verdict) and o.risk == Risk.READ_ONLY for o in outcomes)
        if dynamic is not None and judged_itself and not arguments_are_data(name):
            reason = f"'{name}' gets an argument only known at run time ({dynamic}){where}"
            findings.append(Verdict(Risk.MUTATING, reason))
        return findings

    def stdin(self, stdin: _Stdin, via: tuple[str, ...], depth: int) -> list[Verdict]:
        shell = via[-1]
        where = _where(via[:-1])
        if stdin.kind == "text":
            return self.source(stdin.text, via=via, depth=depth + 1)
        if stdin.kind == "pipe":
            return [Verdict(Risk.MUTATING, f"'{shell}' runs whatever the pipe feeds it{where}")]
        if stdin.kind == "file":
            return [Verdict(Risk.MUTATING, f"'{shell}' runs commands from a file{where}")]
        return [Verdict(Risk.MUTATING, f"'{shell}' opens an interactive shell{where}")]

    def redirect(
        self, redirect: Redirect, variables: dict[str, str | None], via: tuple[str, ...]
    ) -> list[Verdict]:
        op = redirect.op
        shown = f"{redirect.fd}{op}" if redirect.fd is not None else op
        where = _where(via)
        targets = _expand(redirect.target, variables)
        target = targets[0] if len(targets) == 1 else RuntimeText(redirect.target.text)
        if op in (">&", "<&") and (target.isdigit() or target == "-"):
            return []
        if op == ">&":
            op = "&>"
        if op not in TRUNCATING | APPENDING | {"<>"} or is_harmless_sink(target):
            return []
        if isinstance(target, RuntimeText):
            reason = f"'{shown}' writes to a file only known at run time ({target}){where}"
            return [Verdict(Risk.DESTRUCTIVE if op in TRUNCATING else Risk.MUTATING, reason)]
        if is_system_path(target):
            reason = f"'{shown} {target}' writes into a system path{where}"
            return [Verdict(Risk.DESTRUCTIVE, reason)]
        if op in APPENDING:
            return [Verdict(Risk.MUTATING, f"'{shown} {target}' appends to a file{where}")]
        if op == "<>":
            return [Verdict(Risk.MUTATING, f"'<> {target}' opens a file for writing{where}")]
        exists = self.path_exists(target) if self.path_exists else None
        if exists is False:
            return [Verdict(Risk.MUTATING, f"'{shown} {target}' creates a new file{where}")]
        state = "an existing" if exists else "a possibly existing"
        return [Verdict(Risk.DESTRUCTIVE, f"'{shown} {target}' truncates {state} file{where}")]


def _where(via: tuple[str, ...]) -> str:
    return f" (inside {' → '.join(via)})" if via else ""


def _stdin_of(command: Command) -> _Stdin:
    for redirect in reversed(command.redirects):
        if redirect.op in ("<<", "<<-"):
            return _Stdin("text", redirect.body or "")
        if redirect.op == "<<<":
            return _Stdin("text", redirect.target.text)
        if redirect.op == "<" and redirect.fd in (None, 0):
            return _Stdin("file")
    return _Stdin("pipe") if command.piped_input else TERMINAL


def _expand(word: Word, variables: dict[str, str | None]) -> list[str]:
    """The word's value, with variables this line set earlier filled in; RuntimeText if unknown."""
    if not word.dynamic:
        return [word.text]

    def fill(match: re.Match[str]) -> str:
        value = variables.get(match.group(1) or match.group(2))
        return match.group(0) if value is None else value

    text = VARIABLE_RE.sub(fill, word.text)
    if "$" in text or "`" in text:
        return [RuntimeText(word.text)]
    return text.split() if not word.quoted else [text]


def _remember(
    assignments: tuple[Word, ...], variables: dict[str, str | None], nested: bool
) -> None:
    for word in assignments:
        name = word.assignment
        if name is None:
            continue
        value = word.text.split("=", 1)[1]
        if word.dynamic:
            expanded = _expand(Word(value, dynamic=True, quoted=True), variables)[0]
            value = None if isinstance(expanded, RuntimeText) else expanded
        appending = word.text.startswith(f"{name}+=")
        variables[name] = None if nested or appending or value is None else value
