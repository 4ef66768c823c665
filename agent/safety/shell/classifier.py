"""How risky a shell command is: read-only only when every part is fully understood and read-only.

The command is parsed (not pattern-matched) and every simple command in it is judged by its
program's rule, which reads the words with that program's own option grammar. A simple command
is read-only only when its command word is a literal known program, every option is known, no
variable that steers programs is set, its redirections only read or go to /dev/null, and no
expansion feeds a network tool. Whatever it runs in turn (`$(…)`, `bash -c`, `sudo`, `ssh host
'…'`, `docker exec`, `xargs`, `find -exec`, here-documents fed to a shell) is judged the same way.
The worst part wins, and the reasons name the parts that decided it. An option a grammar does
not know makes the call ask, yet the verb is judged again without it, so an unknown option never
lowers what the verb does (`kubectl delete … --force` stays destructive).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass

from agent.safety.shell.command_rules import NETWORK_PROGRAMS, command_name, rule_for
from agent.safety.shell.environment import shell_variable_reason, variable_reason
from agent.safety.shell.expansions import expansion_problem
from agent.safety.shell.options import word_set
from agent.safety.shell.outcomes import (
    Outcome,
    ProgramRule,
    RunsCommand,
    RunsScript,
    RunsStdin,
    UnknownOption,
    Verdict,
)
from agent.safety.shell.paths import CURRENT_DIR, GLOB_RE, device_problem, mentions_device
from agent.safety.shell.redirects import judge_redirect
from agent.safety.shell.shell_parse import Command, ShellSyntaxError, parse_script
from agent.safety.shell.shell_words import RuntimeText, Word
from agent.safety.shell.variables import Variables, working_dir_after
from tools.risk.assessment import Risk

MAX_DEPTH = 12
# The longest command line a host can run: `sh -c COMMAND` gets it as one argument, and Linux's
# execve refuses a single argument over MAX_ARG_STRLEN (32 pages, 128 KiB; E2BIG). A longer one
# is not parsed at all (megabytes of shell would cost the parser seconds and gigabytes).
MAX_COMMAND_BYTES = 128 * 1024
# Programs that name device files without reading them, or read them with their own grammar.
NAMES_DEVICES = word_set(  # name or stat a device file, never open it
    "ls dir stat readlink realpath basename dirname test [ [[ du df tree find echo printf lsblk "
    "findmnt mountpoint udevadm lsof fuser mount umount ibstat ibv_devinfo"
)
DISK_TOOLS = word_set("blkid fdisk sfdisk parted smartctl nvme hdparm file")  # open block devices
PathExists = Callable[[str], bool | None]


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


def classify_command(
    cmd: str, *, path_exists: PathExists | None = None, cwd: str | None = None
) -> Classification:
    """Classify one shell command line.

    `path_exists` may say whether a file already exists on the target (True/False) or that it
    cannot tell (None); without it every `>` target counts as possibly existing, so truncating it
    is destructive. `cwd` is the folder the command starts in (relative paths land there).
    """
    if too_long(cmd):
        return Classification(
            Risk.DESTRUCTIVE,
            [f"longer than a command line can be ({MAX_COMMAND_BYTES // 1024} KiB); not read"],
        )
    findings = _Judge(path_exists, cwd).source(cmd, via=(), depth=0)
    worst = max(f.risk for f in findings)
    reasons = list(dict.fromkeys(f.reason for f in findings if f.risk == worst))
    return Classification(worst, reasons)


def too_long(cmd: str) -> bool:
    """Whether `cmd` is over MAX_COMMAND_BYTES (as UTF-8), so no host could run it."""
    return len(cmd) > MAX_COMMAND_BYTES or len(cmd.encode("utf-8", "replace")) > MAX_COMMAND_BYTES


def commands_run(cmd: str) -> list[list[str]]:
    """Every command line `cmd` would run, wrappers and `sh -c` followed (for deny rules); none
    for a command too long to run (it is destructive, unread: it always asks)."""
    if too_long(cmd):
        return []
    judge = _Judge(None, None)
    judge.source(cmd, via=(), depth=0)
    return judge.seen


class _Judge:
    def __init__(self, path_exists: PathExists | None, cwd: str | None) -> None:
        self.path_exists = path_exists
        # a command over ssh starts in the login's home unless the call names a folder; None
        # later means a `cd` went somewhere only known at run time
        self.cwd = cwd if cwd is not None else "~"
        self.seen: list[list[str]] = []

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
        variables = Variables()
        findings: list[Verdict] = []
        for command in script.commands:
            findings.extend(self.command(command, variables, via, depth))
        return findings

    def command(
        self, command: Command, variables: Variables, via: tuple[str, ...], depth: int
    ) -> list[Verdict]:
        where = _where(via)
        findings: list[Verdict] = []
        for inner in command.substitutions:
            findings.extend(self.source(inner, via=(*via, "$(…)"), depth=depth + 1))
        for redirect in command.redirects:
            target = variables.expand_one(redirect.target)
            exists = self.path_exists
            with _in_dir(self.cwd):
                findings.extend(
                    Verdict(v.risk, v.reason + where)
                    for v in judge_redirect(redirect, target, exists)
                )
        for word in command.assignments:
            if reason := _assignment_reason(word, command.words[:1]):
                findings.append(Verdict(Risk.MUTATING, reason + where))
        for word in (*command.assignments, *command.words):
            findings.extend(_word_problems(word, where))
        for redirect in command.redirects:
            findings.extend(_word_problems(redirect.target, where))
        if not command.words:
            variables.remember(command.assignments, nested=command.nested)
            return findings or [Verdict(Risk.READ_ONLY, "only sets shell variables")]
        head = command.words[0]
        if head.dynamic or head.pattern:
            reason = f"the command name {head.text} is only known at run time{where}"
            findings.append(Verdict(Risk.MUTATING, reason))
        variants = variables.variants(command.words)
        for argv in variants:
            if not argv:
                continue
            if argv[0] == "for" and not head.quoted:
                variables.loop(argv[1:] if len(variants) == 1 else argv[1:2])
                findings.append(_loop_verdict(argv[1:2], where))
                continue
            findings.extend(self.argv(argv, _stdin_of(command), via, depth))
        variables.after_command(variants[0] or [""], command.words)
        self.cwd = working_dir_after(variants[0] or [""], self.cwd) if len(variants) == 1 else None
        return findings or [Verdict(Risk.READ_ONLY, "nothing to run")]

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
        self.seen.append(argv)
        name = command_name(word)
        rule = rule_for(name) if name else None
        if name is None or rule is None:
            return [Verdict(Risk.MUTATING, f"'{word}' is not on the read-only list{where}")]
        args = argv[1:]
        findings: list[Verdict] = []
        with _in_dir(self.cwd):
            outcomes = rule(name, args)
            outcomes += _without_unknown_options(rule, name, args, outcomes)
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
        if name in NETWORK_PROGRAMS:
            findings.extend(_network_problems(name, args, stdin, where))
        opens = name != "file" or any(a in ("-s", "--special-files") for a in args)
        if name not in NAMES_DEVICES and opens:
            with _in_dir(self.cwd):
                findings.extend(_device_reads(name, args, where, disks=name in DISK_TOOLS))
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


@contextmanager
def _in_dir(cwd: str | None) -> Iterator[None]:
    """Sets the working folder rules resolve relative paths against, for one rule call."""
    token = CURRENT_DIR.set(cwd)
    try:
        yield
    finally:
        CURRENT_DIR.reset(token)


def _where(via: tuple[str, ...]) -> str:
    return f" (inside {' → '.join(via)})" if via else ""


def _word_problems(word: Word, where: str) -> list[Verdict]:
    """Expansions bash evaluates as code: arithmetic, subscripts, indirection, `@P`."""
    return [
        Verdict(Risk.MUTATING, reason + where)
        for text in word.expansions
        if (reason := expansion_problem(text))
    ]


def _assignment_reason(word: Word, head: tuple[Word, ...]) -> str | None:
    """A prefix assignment reaches the program's environment; a bare one stays in the shell;
    `IFS= read` only stops `read` splitting its line (the common `while IFS= read -r line`)."""
    name = word.assignment or ""
    value = None if word.dynamic else word.text.split("=", 1)[1]
    if name == "IFS" and value == "" and head and head[0].text == "read" and not head[0].quoted:
        return None
    return variable_reason(name, value, exported=bool(head))


def _loop_verdict(names: list[str], where: str) -> Verdict:
    name = names[0] if names else ""
    if isinstance(name, RuntimeText) or not name:
        return Verdict(Risk.MUTATING, f"'for' sets a variable only known at run time{where}")
    if reason := shell_variable_reason(name):
        return Verdict(Risk.MUTATING, f"'for {name}': {reason}{where}")
    return Verdict(Risk.READ_ONLY, "'for' only loops over words")


def _without_unknown_options(
    rule: ProgramRule, name: str, args: list[str], outcomes: list[Outcome], tries: int = 3
) -> list[Outcome]:
    """The verb decides first: judged again without each option the grammar did not know
    (alone, and with the word after it, as if it took a value), a destructive verb stays so."""
    unknown = next((o for o in outcomes if isinstance(o, UnknownOption)), None)
    if unknown is None or tries == 0 or unknown.word not in args:
        return []
    found: list[Outcome] = []
    option, at = unknown.word, args.index(unknown.word)
    for skip in (1, 2):
        rest = args[:at] + args[at + skip :]
        again = rule(name, rest)
        again += _without_unknown_options(rule, name, rest, again, tries - 1)
        found += [
            Verdict(o.risk, f"{o.reason} (whatever {option} does)")
            for o in again
            if isinstance(o, Verdict) and o.risk == Risk.DESTRUCTIVE
        ]
    return found[:1]


def _device_reads(name: str, args: list[str], where: str, *, disks: bool) -> list[Verdict]:
    """A file argument that is a device off the short list (`cat /dev/watchdog`); disk tools
    may open block devices (`blkid /dev/nvme0n1`), never another device."""
    for arg in args:
        if isinstance(arg, RuntimeText):
            if mentions_device(arg):  # `cat $(echo /dev/watchdog)`
                reason = f"'{name}' may open a device file named at run time ({arg}){where}"
                return [Verdict(Risk.MUTATING, reason)]
            if not GLOB_RE.search(arg):
                continue  # a glob is judged as the paths it may match, below
        for path in {arg, arg.split("=", 1)[-1]}:
            if problem := device_problem(path, block_devices=disks):
                return [Verdict(Risk.MUTATING, f"'{name}': {problem}{where}")]
    return []


def _network_problems(name: str, args: list[str], stdin: _Stdin, where: str) -> list[Verdict]:
    """Text only known at run time, or piped input, leaving the host through a network tool."""
    dynamic = next((a for a in args if isinstance(a, RuntimeText) and "$" in a), None)
    if dynamic is not None:
        reason = f"'{name}' sends text only known at run time ({dynamic}) over the network"
        return [Verdict(Risk.MUTATING, reason + where)]
    if name in ("ssh", "nslookup") and stdin.kind in ("pipe", "file"):
        return [Verdict(Risk.MUTATING, f"'{name}' sends its input to another host{where}")]
    return []


def _stdin_of(command: Command) -> _Stdin:
    for redirect in reversed(command.redirects):
        if redirect.op in ("<<", "<<-"):
            return _Stdin("text", redirect.body or "")
        if redirect.op == "<<<":
            return _Stdin("text", redirect.target.text)
        if redirect.op == "<" and redirect.fd in (None, 0):
            return _Stdin("file")
    return _Stdin("pipe") if command.piped_input else TERMINAL
