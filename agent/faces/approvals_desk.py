"""`scout approvals`: what Scout's MCP sessions wait for, and a person's decision on one.

Without an id it lists the pending approvals (agent/mcp/desk.py). With one it shows the same
panel chat shows and asks the same question (y / n / e, and s for a plan with its steps), then
leaves the decision on the desk for the session that asked. Deciding needs a terminal: the
host agent that made the call must not answer its own question, and it runs commands without
one. (It runs them as the same account, though: deny it `scout approvals` in the host's
permission rules; README, "Scout inside your agent".)
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from rich.console import Console

    from agent.mcp.desk import ApprovalDesk

EXIT_OK, EXIT_ERROR = 0, 1


def desk_folder() -> Path:
    from agent.runtime.settings import scout_home

    return scout_home() / "approvals"


def add_approvals_command(sub: argparse._SubParsersAction) -> None:
    parser = sub.add_parser(
        "approvals",
        help="list what `scout mcp` sessions wait for; decide one at the terminal",
        description=(
            "Without an id, list the approvals Scout's MCP sessions wait for. With an id, show "
            "it as chat shows it and decide it (a terminal is needed: a person decides)."
        ),
    )
    parser.add_argument("id", nargs="?", help="the approval to decide")
    parser.set_defaults(func=_cmd_approvals)


def _cmd_approvals(args: argparse.Namespace) -> int:
    from rich.console import Console

    from agent.mcp.desk import ApprovalDesk

    desk = ApprovalDesk(desk_folder())
    console = Console(highlight=False, soft_wrap=True)
    if args.id is None:
        return _list(desk, console)
    try:
        posted = desk.find(args.id)
    except ValueError as exc:
        print(f"scout approvals: {exc}", file=sys.stderr)
        return EXIT_ERROR
    if posted is None:
        print(
            f"scout approvals: nothing waits under {args.id} (decided, expired, or its session "
            "ended); `scout approvals` lists what waits",
            file=sys.stderr,
        )
        return EXIT_ERROR
    if not (sys.stdin.isatty() and sys.stdout.isatty()):
        print(
            "scout approvals: deciding needs a person at a terminal (stdin or stdout is not "
            "one); listing works anywhere",
            file=sys.stderr,
        )
        return EXIT_ERROR
    import asyncio  # here: `scout` builds this parser for every command

    from agent.safety.approvers.terminal import TerminalApprover

    async def ask(prompt: str) -> str:
        return await asyncio.to_thread(input, prompt)

    console.print(f"asked by {posted.client} as {posted.principal}, session {posted.session}")
    decision = asyncio.run(TerminalApprover(console, ask).decide(posted.request))
    desk.decide(args.id, decision)
    console.print(f"{decision.kind}: the session collects it when its client calls again")
    return EXIT_OK


def _list(desk: ApprovalDesk, console: Console) -> int:
    from rich.table import Table

    waiting = desk.waiting()
    if not waiting:
        console.print("no approvals are waiting")
        return EXIT_OK
    table = Table("id", "tool", "hosts", "what", "asked by", "since", box=None)
    for posted in waiting:
        request = posted.request
        table.add_row(
            request.id,
            request.tool,
            ", ".join(request.hosts) or "-",
            request.summary.splitlines()[0] if request.summary else request.reason,
            f"{posted.client} ({posted.principal})",
            posted.posted_at,
        )
    console.print(table)
    console.print("decide one with: scout approvals ID")
    return EXIT_OK
