"""`scout status`, `scout stop`, `scout teardown`: the recorded deployments, on day two.

Status reads each record's hosts and endpoint (agent/daytwo/status.py) and exits with the worst
state found: 0 serving, 1 drifted, 2 degraded, 3 stopped, 4 gone, 5 unknown (6: no records could
be read). Stop and teardown turn a record into a plan (agent/daytwo/teardown.py) that runs as a
session of the operator's: approved once at the terminal, with the same panel as chat (`ci` mode:
denied, nothing runs), every call in a transcript. A finished teardown retires the record.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from agent.safety.modes import MODES

if TYPE_CHECKING:  # the session's parts load only when a command runs (`scout --help` is fast)
    from rich.console import Console

    from agent.daytwo.run_plan import PlanRun
    from agent.daytwo.status import DeploymentStatus
    from agent.faces.settings_loader import SettingsLoader
    from agent.runtime.deployment_record import DeploymentRecord
    from agent.runtime.settings import Settings
    from agent.safety.approvers.terminal import TerminalApprover
    from agent.safety.rules import RuleSet

EXIT_NO_RECORD, EXIT_NOT_DONE = 6, 3


def add_daytwo_commands(sub: argparse._SubParsersAction, load: SettingsLoader) -> None:
    status = sub.add_parser(
        "status",
        help="the recorded deployments as their hosts and endpoints show them now",
        description="Read every recorded deployment (or NAME: its id, endpoint or model) from its "
        "hosts in one round and with one short generation. Exit status: the worst state, "
        "0 serving, 1 drifted, 2 degraded, 3 stopped, 4 gone, 5 unknown.",
    )
    status.add_argument("name", nargs="?", metavar="NAME")
    status.add_argument("--json", action="store_true", help="one JSON object per deployment")
    status.add_argument("--inventory", help="inventory YAML (default from settings)")
    status.set_defaults(func=lambda args: _cmd_status(args, load))
    for action, text in (
        ("stop", "drain and stop a recorded deployment's engine, keeping its containers"),
        ("teardown", "stop and remove what Scout started for a deployment (--restore: and undo "
         "what it changed), as one plan you approve"),
    ):  # fmt: skip
        parser = sub.add_parser(action, help=text, description=text[0].upper() + text[1:] + ".")
        parser.add_argument("name", nargs="?", metavar="NAME")
        parser.add_argument("--inventory", help="inventory YAML (default from settings)")
        parser.add_argument("--mode", choices=MODES, help="safety mode (default from settings)")
        if action == "teardown":
            parser.add_argument(
                "--restore",
                action="store_true",
                help="also undo what the rollout changed (start what it stopped, links as found)",
            )
        parser.set_defaults(func=lambda args, action=action: _cmd_takedown(args, action, load))


def daytwo_settings(
    args: argparse.Namespace, load: SettingsLoader, flags: dict[str, Any]
) -> Settings | None:
    settings = load({"inventory": args.inventory, **flags}, log=True)
    if settings is not None and settings.inventory is None:
        print(f"scout {args.cmd}: no inventory: pass --inventory FILE", file=sys.stderr)
        return None
    return settings


def chosen_records(
    settings: Settings, name: str | None, command: str
) -> list[DeploymentRecord] | None:
    from agent.runtime.deployment_record import RecordStore

    store = RecordStore(settings.deployments_dir)
    records, problems = store.load()
    for problem in problems:
        print(f"scout {command}: warning: {problem}", file=sys.stderr)
    if name is None and command == "status":
        return records
    found = store.find(name)
    if isinstance(found, str):
        print(f"scout {command}: {found}", file=sys.stderr)
        return None
    return [found]


def _cmd_status(args: argparse.Namespace, load: SettingsLoader) -> int:
    settings = daytwo_settings(args, load, {})
    records = chosen_records(settings, args.name, "status") if settings is not None else None
    if settings is None or records is None:
        return EXIT_NO_RECORD
    if not records:
        print(f"no deployment is recorded yet ({settings.deployments_dir}): a session that "
              "proves its endpoint records one")  # fmt: skip
        return 0
    import asyncio  # here, as every command's heavy imports: `scout` builds this parser always

    statuses = asyncio.run(statuses_now(settings, records))
    for status in statuses:
        if args.json:
            print(json.dumps(status.as_json()))
        else:
            _print_status(status)
    return max(status.exit_code for status in statuses)


async def statuses_now(settings: Settings, records: list[DeploymentRecord]) -> list[Any]:
    """Each record's status, all read at once over one pool of connections."""
    import asyncio

    from agent.daytwo.status import deployment_status
    from tools.ssh import Inventory, SSHPool

    assert settings.inventory is not None
    async with SSHPool(Inventory.load(settings.inventory)) as pool:
        return list(await asyncio.gather(*(deployment_status(r, pool) for r in records)))


def _print_status(status: DeploymentStatus) -> None:
    record = status.record
    print(f"{record.id}: {status.state} — {record.model} at {record.endpoint}, "
          f"recorded {record.recorded_at:%Y-%m-%d %H:%M} UTC")  # fmt: skip
    for reason in status.reasons:
        print(f"  {reason}")
    if status.answer:
        print(f"  answered: {status.answer[:80]!r}")


def _cmd_takedown(args: argparse.Namespace, action: str, load: SettingsLoader) -> int:
    settings = daytwo_settings(args, load, {"mode": args.mode})
    records = chosen_records(settings, args.name, action) if settings is not None else None
    if settings is None or not records:
        return EXIT_NO_RECORD
    restore = bool(getattr(args, "restore", False))
    import asyncio

    run = asyncio.run(takedown(settings, records[0], action, restore=restore))
    return 0 if run.outcome == "done" else EXIT_NOT_DONE


async def takedown(
    settings: Settings,
    record: DeploymentRecord,
    action: str,
    *,
    restore: bool = False,
    console: Console | None = None,
    **builder: Any,
) -> PlanRun:
    """Stop or tear down `record` as one approved plan; a finished teardown retires the record.
    `builder`: further arguments for open_runtime (tests pass an approver factory)."""
    from rich.console import Console

    from agent.daytwo.run_plan import run_plan
    from agent.daytwo.teardown import takedown_plan
    from agent.loop.model_turn import NoModel
    from agent.runtime.builder import open_runtime
    from agent.runtime.deployment_record import RecordStore

    out = console or Console(highlight=False)
    builder.setdefault("approver_factory", operator_approver(settings, out))
    others, _ = RecordStore(settings.deployments_dir).load()
    plan = takedown_plan(
        record, "stop" if action == "stop" else "teardown", restore=restore, others=others
    )
    runtime = await open_runtime(settings, client=NoModel(f"scout {action}"), **builder)
    try:
        run = await run_plan(runtime, plan, verify_hosts=record.hosts())
    finally:
        await runtime.aclose()
    if run.outcome == "done" and action == "teardown":
        RecordStore(settings.deployments_dir).remove(record)
    said = f"scout {action} {record.id}: {run.outcome}" + (f": {run.detail}" if run.detail else "")
    out.print(said, markup=False, style="green" if run.outcome == "done" else "yellow")
    out.print(f"transcript: {runtime.transcript_path}", markup=False, style="dim")
    return run


def operator_approver(
    settings: Settings, out: Console
) -> Callable[[RuleSet], TerminalApprover | None]:
    """The operator at the terminal decides, with chat's panel; `ci` mode has no one to ask."""
    import asyncio

    from agent.safety.approvers.terminal import TerminalApprover

    async def ask(question: str) -> str:
        return await asyncio.to_thread(out.input, question)

    def approver(rules: RuleSet) -> TerminalApprover | None:
        return None if settings.mode == "ci" else TerminalApprover(out, ask, rules)

    return approver
