"""`scout upgrade`: a recorded deployment moved to another image, model revision or flag set.

The plan comes from the record (agent/daytwo/upgrade_plan.py) and is approved once at the
terminal, as stop and teardown are (`ci` mode: denied, nothing runs). It shows its rollback;
approved with its steps, that rollback runs without asking if anything fails
(agent/daytwo/upgrade_run.py). Exit status: 0 upgraded, 3 not upgraded (the old one serves on:
stopped before the swap, or rolled back and proven again), 4 the rollback failed, 6 no record.
A finished upgrade replaces the record: the new state is the known-good one.
"""

from __future__ import annotations

import argparse
import sys
from typing import TYPE_CHECKING, Any

from agent.faces.daytwo import chosen_records, daytwo_settings, operator_approver
from agent.safety.modes import MODES

if TYPE_CHECKING:
    from rich.console import Console

    from agent.daytwo.upgrade_plan import UpgradeRequest
    from agent.daytwo.upgrade_run import UpgradeRun
    from agent.faces.settings_loader import SettingsLoader
    from agent.runtime.deployment_record import DeploymentRecord
    from agent.runtime.settings import Settings

EXIT_UPGRADED, EXIT_NOT_UPGRADED, EXIT_ROLLBACK_FAILED, EXIT_NO_RECORD = 0, 3, 4, 6
EXITS = {"upgraded": EXIT_UPGRADED, "rollback failed": EXIT_ROLLBACK_FAILED}


def add_upgrade_command(sub: argparse._SubParsersAction, load: SettingsLoader) -> None:
    text = (
        "move a recorded deployment to another image, model revision or flag set: fetched "
        "first while it serves, then swapped and proven, rolled back automatically on failure"
    )
    parser = sub.add_parser("upgrade", help=text, description=text[0].upper() + text[1:] + ".")
    parser.add_argument("name", nargs="?", metavar="NAME", help="its id, endpoint or model")
    parser.add_argument("--image", help="the engine image to move to")
    parser.add_argument("--revision", help="the model revision (commit or branch) to serve")
    parser.add_argument(
        "--flag",
        action="append",
        default=[],
        metavar="'FLAG [VALUE]'",
        help="an engine flag to add, e.g. --flag='--enforce-eager' (repeatable)",
    )
    parser.add_argument(
        "--drop-flag",
        action="append",
        default=[],
        metavar="FLAG",
        help="an engine flag to drop, with its value, e.g. --drop-flag=--kv-cache-dtype",
    )
    for flag, default, what in (
        ("--soak", 60.0, "seconds to watch the new engine after its proof"),
        ("--wait", 3600.0, "seconds a fetch or an engine may take to be ready"),
    ):
        parser.add_argument(
            flag, type=float, default=default, metavar="S", help=f"{what} (default {default:g})"
        )
    parser.add_argument("--inventory", help="inventory YAML (default from settings)")
    parser.add_argument("--mode", choices=MODES, help="safety mode (default from settings)")
    parser.set_defaults(func=lambda args: _cmd_upgrade(args, load))


def _cmd_upgrade(args: argparse.Namespace, load: SettingsLoader) -> int:
    from agent.daytwo.upgrade_plan import UpgradeRefused, UpgradeRequest

    settings = daytwo_settings(args, load, {"mode": args.mode})
    records = chosen_records(settings, args.name, "upgrade") if settings is not None else None
    if settings is None or not records:
        return EXIT_NO_RECORD
    request = UpgradeRequest(
        image=args.image,
        revision=args.revision,
        add_flags=[word for flag in args.flag for word in flag.split()],
        drop_flags=args.drop_flag,
    )
    import asyncio  # here: `scout --help` and `scout recon` start without it

    try:
        run = asyncio.run(
            upgrade(settings, records[0], request, soak_s=args.soak, wait_s=args.wait)
        )
    except UpgradeRefused as refused:
        print(f"scout upgrade: {refused}", file=sys.stderr)
        return EXIT_NO_RECORD
    return EXITS.get(run.outcome, EXIT_NOT_UPGRADED)


async def upgrade(
    settings: Settings,
    record: DeploymentRecord,
    request: UpgradeRequest,
    *,
    soak_s: float,
    wait_s: float,
    console: Console | None = None,
    **builder: Any,
) -> UpgradeRun:
    """Plan the upgrade from `record`, run it as one approved plan, keep the record current.
    `builder`: further arguments for open_runtime (tests pass an approver factory)."""
    from rich.console import Console

    from agent.daytwo.upgrade_plan import upgrade_plan
    from agent.daytwo.upgrade_run import run_upgrade
    from agent.loop.model_turn import NoModel
    from agent.runtime.builder import open_runtime
    from agent.runtime.deployment_record import RecordStore

    out = console or Console(highlight=False)
    store = RecordStore(settings.deployments_dir)
    others, _ = store.load()
    planned = upgrade_plan(record, request, others=others, soak_s=soak_s)
    builder.setdefault("approver_factory", operator_approver(settings, out))
    runtime = await open_runtime(settings, client=NoModel("scout upgrade"), **builder)
    try:
        run = await run_upgrade(
            runtime, planned, wait_s=wait_s, soak_s=soak_s,
            report=lambda line: out.print(line, markup=False, style="dim"),
        )  # fmt: skip
    finally:
        await runtime.aclose()
    if run.outcome == "upgraded" and run.record is not None:
        store.save(run.record)
        if run.record.id != record.id:  # blue/green moved the endpoint: one record, the new
            store.remove(record)
    style = {"upgraded": "green", "rollback failed": "red"}.get(run.outcome, "yellow")
    out.print(f"scout upgrade {record.id}: {run.outcome}: {run.detail}", markup=False, style=style)
    out.print(f"transcript: {runtime.transcript_path}", markup=False, style="dim")
    return run
