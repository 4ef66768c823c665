"""`scout exec HOST -- COMMAND…`: one command through exactly the path a model's ssh_exec takes.

Validation, the classifier, the rules, the mode, the approver, the wall, redaction and the
transcript: the session is the real one (open_runtime), only no model is asked. The plan gate,
which keeps a model's session read-only until a person approves its plan, is met by the
operator's own command: it stands as a one-step plan the operator approved by typing it, so a
change asks (and in `ci` mode is denied) as any approved plan's calls do. It prints the
verdict, whether the command ran inside the wall, and the output; it exits with the command's
status, or 3 when the command did not run (refused, denied, or its host could not run it).
With `--walled` the person chose the wall: the command runs inside it unasked, whatever the
classifier would say, and nowhere else; the output names each attempt the wall stopped, as the
kernel reported it (EACCES/EPERM on stderr).
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from agent.safety.modes import MODES

if TYPE_CHECKING:  # the session's parts load only when a command runs (`scout --help` is fast)
    from rich.console import Console

    from agent.faces.settings_loader import SettingsLoader
    from agent.runtime.settings import Settings
    from agent.safety.rules import RuleSet
    from tools.base import ToolResult
    from tools.plans.plan import Plan

EXIT_NOT_RUN = 3


def add_exec_command(sub: argparse._SubParsersAction, load: SettingsLoader) -> None:
    parser = sub.add_parser(
        "exec",
        help="run one command on a host through Scout's gate and wall",
        description=(
            "Run one command on one host exactly as a model's ssh_exec runs: classified, held to "
            "the rules and the mode, asked about when it must be, walled when it runs unasked, "
            "redacted and recorded. Exit status: the command's, or 3 when it did not run."
        ),
    )
    parser.add_argument("--inventory", help="inventory YAML (default from settings)")
    parser.add_argument("--mode", choices=MODES, help="safety mode (default from settings)")
    parser.add_argument(
        "--walled",
        action="store_true",
        help="run it inside the wall, unasked whatever it is (it runs nowhere else); the "
        "output names what the wall stopped, as the kernel reported it",
    )
    parser.add_argument("host", metavar="HOST")
    parser.add_argument("command", nargs=argparse.REMAINDER, metavar="-- COMMAND")
    parser.set_defaults(func=lambda args: _cmd_exec(args, load))


def _cmd_exec(args: argparse.Namespace, load: SettingsLoader) -> int:
    words = args.command[1:] if args.command[:1] == ["--"] else args.command
    if not words:
        print("scout exec: give the command after --: scout exec HOST -- COMMAND", file=sys.stderr)
        return 2
    settings = load({"inventory": args.inventory, "mode": args.mode}, log=True)
    if settings is None:
        return 2
    if settings.inventory is None:
        print("scout exec: no inventory: pass --inventory FILE", file=sys.stderr)
        return 2
    import asyncio  # here: `scout` builds this parser for every command

    return asyncio.run(exec_one(settings, args.host, " ".join(words), walled_only=args.walled))


async def exec_one(
    settings: Settings,
    host: str,
    command: str,
    *,
    console: Console | None = None,
    **builder: Any,
) -> int:
    """Run `command` on `host` as ssh_exec; print verdict, wall and output; the exit status.
    `builder`: further arguments for open_runtime (tests pass a transcript path, a judge)."""
    import asyncio
    import uuid

    from rich.console import Console

    from agent.loop.calls import PreparedCall, ToolCall
    from agent.loop.model_turn import NoModel
    from agent.runtime.builder import open_runtime
    from agent.safety.approvers.terminal import TerminalApprover

    out = console or Console(highlight=False)

    async def ask(question: str) -> str:
        return await asyncio.to_thread(out.input, question)

    def approver(rules: RuleSet) -> TerminalApprover | None:
        if settings.mode == "ci":
            return None  # no one to ask: what needs a human is denied
        return TerminalApprover(out, ask, rules)

    runtime = await open_runtime(
        settings, client=NoModel("scout exec"), approver_factory=approver, **builder
    )
    runtime.state.plan.approve(_operator_plan(host, command))
    try:
        call_input = {"host": host, "command": command}
        call = ToolCall(f"exec-{uuid.uuid4().hex[:8]}", "ssh_exec", call_input)
        prepared = runtime.session.executor.prepare(call)
        if isinstance(prepared, PreparedCall):
            out.print(f"verdict: {prepared.risk.label} ({prepared.risk_reason})", markup=False)
        [result] = await runtime.session.run_operator_calls([call])
        why = (result.meta.get("unwalled") or {}).get(host)
        ran = result.meta.get("exit_status") is not None or result.meta.get("gated")
        if why is not None and not ran and not builder.get("walled_only"):
            # The host cannot wall reads, so the command did not run; sent again, it is no
            # longer a read that may run unasked there, and the gate asks (or, in ci, denies).
            out.print(f"{host} cannot wall reads ({why}): asking as for a change", markup=False)
            again = ToolCall(f"exec-{uuid.uuid4().hex[:8]}", "ssh_exec", call_input)
            [result] = await runtime.session.run_operator_calls([again])
        return _report(out, result, host, runtime.session.parts.redactor.text)
    finally:
        await runtime.aclose()
        out.print(f"transcript: {runtime.transcript_path}", markup=False, style="dim")


def _operator_plan(host: str, command: str) -> Plan:
    from tools.plans.plan import Plan, PlanStep

    step = PlanStep(
        title="the operator's command",
        hosts=[host],
        actions=[command],
        expected_downtime="as the command has",
        rollback="the operator's to decide",
        success_check="the command's exit status",
    )
    return Plan(goal=f"run one command on {host} (scout exec)", steps=[step])


def _report(console: Console, result: ToolResult, host: str, redact: Callable[[str], str]) -> int:
    status = result.meta.get("exit_status")
    walled = (result.meta.get("walled") or {}).get(host)
    if result.meta.get("gated") or status is None:
        console.print("not run", markup=False)
        console.print(redact(result.text), markup=False)
        return EXIT_NOT_RUN
    console.print("ran inside the wall" if walled else "ran without the wall", markup=False)
    console.print(redact(result.text), markup=False)
    return int(status)
