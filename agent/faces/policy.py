"""`scout policy classify` and `scout policy check`: the safety policy, asked by an operator.

`classify 'CMD'` prints a command's risk and every reason; `classify --file F` prints
`label<TAB>command` for each line of F, in order (for audits). `check --call JSON` judges one
tool call as the gate would after a plan approval (the settings file's rules, read as a session
reads them, with those from `--allow/--ask/--deny`; the operator's `a` answers from
`--session-allow`; the settings' mode or `--mode`) and prints `RISK DECISION — why`.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any, TextIO

from pydantic import ValidationError

from agent.loop.executor import describe_validation_error, judge_risk
from agent.runtime.settings import SettingsError
from agent.safety.approvals import ApprovalRequest
from agent.safety.display import visible
from agent.safety.modes import Mode
from agent.safety.policy import policy_answer
from agent.safety.rules import ApprovalRule, RuleError, RuleSet
from agent.safety.session_rules import session_rule
from agent.safety.shell.classifier import MAX_COMMAND_BYTES, classify_command, too_long
from agent.safety.shell.judge import judge_shell
from tools.base import Tool
from tools.docker_ctl import DockerCtl
from tools.ssh import Inventory, SSHPool
from tools.ssh_exec import SSHExec
from tools.web_fetch import WebFetchTool

EXIT_OK = 0
EXIT_ERROR = 1
EXIT_USAGE = 2
DISPLAY_LIMIT = 160


class CheckError(ValueError):
    """An input `scout policy check` cannot judge; the message says what to fix."""


def classify_main(argv: list[str], out: TextIO | None = None) -> int:
    """Classify the command given as one argument (several words are joined with spaces)."""
    stream = out or sys.stdout
    command = " ".join(argv).strip()
    if not command:
        print(
            "scout policy classify: give the command as one quoted argument (or --file F), e.g.",
            file=sys.stderr,
        )
        print("  scout policy classify 'docker rm -f vllm_node'", file=sys.stderr)
        return EXIT_USAGE
    if too_long(command):
        return _refuse_size("the command", command)
    verdict = classify_command(command)
    reasons = verdict.reasons or ["no reason recorded"]
    print(f"{verdict.label}: {_display(command)} — {visible(reasons[0])}", file=stream)
    for reason in reasons[1:]:
        print(f"  also: {visible(reason)}", file=stream)
    return EXIT_OK


def classify_file_main(path: str, out: TextIO | None = None) -> int:
    """`label<TAB>command` for each non-empty line of the file (`-`: standard input)."""
    stream = out or sys.stdout
    try:
        data = sys.stdin.buffer.read() if path == "-" else Path(path).read_bytes()
        text = data.decode("utf-8")
    except OSError as exc:
        print(f"scout policy classify: cannot read {path}: {exc.strerror or exc}", file=sys.stderr)
        return EXIT_USAGE
    except UnicodeDecodeError as exc:
        print(
            f"scout policy classify: {path} is not UTF-8 text (byte 0x{data[exc.start]:02x} at "
            f"offset {exc.start}); give a text file of shell commands, one a line",
            file=sys.stderr,
        )
        return EXIT_USAGE
    lines = text.splitlines()
    for number, line in enumerate(lines, start=1):
        if too_long(line):
            return _refuse_size(f"line {number} of {path}", line)
    for line in lines:
        if line.strip():
            print(f"{classify_command(line).label}\t{visible(line)}", file=stream)
    return EXIT_OK


def _refuse_size(what: str, command: str) -> int:
    """A command no host could run is not classified: say so by its size, before any parsing."""
    size = len(command.encode("utf-8", "replace"))
    print(
        f"scout policy classify: {what} is {_size(size)}, longer than a command line can be "
        f"({MAX_COMMAND_BYTES // 1024} KiB: Linux's limit on one argument, as `sh -c` gets it); "
        "not classified",
        file=sys.stderr,
    )
    return EXIT_USAGE


def _size(size: int) -> str:
    return f"{size / 1024 / 1024:.1f} MiB" if size >= 1024 * 1024 else f"{size / 1024:.0f} KiB"


def check_main(
    call: str,
    *,
    settings_rules: dict[str, list[str]] | None = None,
    allow: list[str],
    ask: list[str],
    deny: list[str],
    session_allow: list[str],
    mode: Mode,
    out: TextIO | None = None,
) -> int:
    stream = out or sys.stdout
    try:
        line = check_line(
            call,
            settings_rules=settings_rules,
            allow=allow,
            ask=ask,
            deny=deny,
            session_allow=session_allow,
            mode=mode,
        )
    except CheckError as exc:
        print(f"scout policy check: {exc}", file=sys.stderr)
        return EXIT_USAGE
    except SettingsError as exc:  # as a session would refuse to start
        print(f"scout: {exc}", file=sys.stderr)
        return EXIT_ERROR
    print(line, file=stream)
    return EXIT_OK


def check_line(
    call: str,
    *,
    settings_rules: dict[str, list[str]] | None = None,
    allow: list[str],
    ask: list[str],
    deny: list[str],
    session_allow: list[str],
    mode: Mode,
) -> str:
    """`RISK DECISION — why` for one call, as the gate would answer after a plan approval:
    `settings_rules` read as a session reads them, then the rules given on the command line."""
    from agent.runtime.settings_rules import read_rules
    from agent.runtime.settings_rules import settings_rules as read_settings_rules

    tool, tool_input, params = _call(call)
    rules = read_settings_rules(settings_rules)
    try:
        given = read_rules({"allow": allow, "ask": ask, "deny": deny}, source="--rule")
    except RuleError as exc:
        raise CheckError(str(exc)) from None
    for rule in given.rules:
        rules.add(rule)
    for answered in session_allow:
        rules.add(_session_rule(answered, rules))
    assessment = judge_risk(tool, params)
    risk, reason = assessment.risk, assessment.reason
    answer = policy_answer(
        tool=tool.name,
        tool_input=tool_input,
        hosts=tool.hosts(params),
        risk=risk,
        reason=reason,
        rules=rules,
        mode=mode,
        plan_approved=True,
    )
    return visible(f"{risk.label} {answer.decision} — {answer.why}")


def _tools() -> dict[str, Tool]:
    """The tools whose calls are judged here: judged, never run, so their pool reaches no host."""
    nowhere = SSHPool(Inventory(hosts={}))
    tools = (SSHExec(nowhere, judge_shell), DockerCtl(nowhere, judge_shell), WebFetchTool())
    return {tool.name: tool for tool in tools}


def _call(text: str) -> tuple[Tool, dict[str, Any], Any]:
    try:
        call = json.loads(text)
    except json.JSONDecodeError as exc:
        raise CheckError(f"--call is not JSON ({exc.msg} at character {exc.pos})") from None
    if not isinstance(call, dict) or not isinstance(call.get("input"), dict):
        raise CheckError('--call must look like {"tool": "ssh_exec", "input": {…}}')
    tools = _tools()
    tool = tools.get(str(call.get("tool")))
    if tool is None:
        raise CheckError(f"--call names tool {call.get('tool')!r}; known: {', '.join(tools)}")
    try:
        params = tool.Input.model_validate(call["input"])
    except ValidationError as exc:
        raise CheckError(describe_validation_error(tool.name, exc)) from None
    return tool, call["input"], params


def _session_rule(text: str, rules: RuleSet) -> ApprovalRule:
    """The rule the operator's `a` answer to this call adds, as the terminal makes it."""
    tool, tool_input, params = _call(text)
    request = ApprovalRequest(
        id="a",
        fingerprint="a",
        tool=tool.name,
        input=tool_input,
        hosts=tool.hosts(params),
        risk="mutating",
        reason="",
    )
    rule = session_rule(request, tool.rule_shape)
    if rule is None:
        raise CheckError(
            f"no exact rule can be made for --session-allow {text}; `a` is not "
            "offered for such a call"
        )
    return ApprovalRule.parse("allow", rule, "operator (this session)", rules.shapes)


def _display(command: str) -> str:
    first_line, _, rest = command.partition("\n")
    shown = visible(first_line[:DISPLAY_LIMIT])
    return shown + (" …" if rest or len(first_line) > DISPLAY_LIMIT else "")
