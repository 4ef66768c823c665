"""The terminal approver: shows what would run and asks y / n / e / a on the operator's terminal.

`y` approves once; `n` denies (with an optional message the model will read); `e` edits the
command (or the JSON input) and approves the edit; `a` approves and allows calls of this shape for
the rest of the session. Anything else asks again; end of input denies.
"""

from __future__ import annotations

import json
import shlex
from collections.abc import Awaitable, Callable

from rich.console import Console
from rich.panel import Panel
from rich.text import Text

from agent.safety.approvals import ApprovalRequest, Decision

AskLine = Callable[[str], Awaitable[str]]
AllowPattern = Callable[[str], object]

_RISK_STYLE = {
    "read_only": "green",
    "mutating": "yellow",
    "destructive": "bold red",
    "plan": "cyan",
}


def session_pattern(request: ApprovalRequest) -> str:
    """A rule for `a`: same tool and hosts, commands starting with the same program and verb."""
    fields = []
    if request.hosts:
        fields.append(f"host={request.hosts[0] if len(request.hosts) == 1 else '*'}")
    command = request.input.get("command")
    if isinstance(command, str) and command.strip():
        try:
            words = shlex.split(command)[:2]
        except ValueError:  # unbalanced quotes: plain words will do for a pattern
            words = command.split()[:2]
        fields.append(f'command="{" ".join(words)}*"')
    return f"{request.tool}({', '.join(fields)})" if fields else request.tool


class TerminalApprover:
    def __init__(self, console: Console, ask: AskLine, allow_pattern: AllowPattern | None = None):
        self.console = console
        self.ask = ask
        self.allow_pattern = allow_pattern

    def show(self, request: ApprovalRequest) -> None:
        body = Text()
        body.append(f"{request.tool}", style="bold")
        if request.hosts:
            body.append(f" on {', '.join(request.hosts)}")
        body.append("\n")
        command = request.input.get("command")
        body.append(f"$ {command}\n" if isinstance(command, str) else f"{request.summary}\n")
        body.append("risk: ")
        body.append(request.risk, style=_RISK_STYLE.get(request.risk, ""))
        body.append(f" — {request.reason}\n")
        if request.plan_step:
            body.append(f"serves: {request.plan_step}\n")
        self.console.print(Panel(body, title="approval needed", border_style="yellow"))

    async def decide(self, request: ApprovalRequest) -> Decision:
        self.show(request)
        can_allow = self._can_allow(request)
        keys = "[y]es once / [n]o / [e]dit" + (" / [a]llow like this" if can_allow else "")
        while True:
            try:
                answer = (await self.ask(f"approve? {keys} › ")).strip().lower()
            except (EOFError, KeyboardInterrupt):
                return self._decision(request, "denied", "no answer (input closed)")
            if answer in {"y", "yes"}:
                return self._decision(request, "approved")
            if answer in {"n", "no"}:
                message = await self._optional("tell the agent why (optional) › ")
                return self._decision(request, "denied", message or "the operator said no")
            if answer in {"e", "edit"}:
                edited = await self._edit(request)
                if edited is not None:
                    return self._decision(request, "approved_with_edit", edited=edited)
                continue
            if answer in {"a", "allow"} and can_allow:
                rule = session_pattern(request)
                self.allow_pattern(rule)
                self.console.print(Text(f"allowed for this session: {rule}", style="green"))
                return self._decision(request, "approved", f"and allowed {rule} for the session")
            self.console.print("answer y, n, e" + (" or a" if can_allow else ""))

    def _can_allow(self, request: ApprovalRequest) -> bool:
        """Plans are approved whole and once; only tool calls can become session rules."""
        return self.allow_pattern is not None and request.tool != "propose_plan"

    async def _optional(self, prompt: str) -> str:
        try:
            return (await self.ask(prompt)).strip()
        except (EOFError, KeyboardInterrupt):
            return ""

    async def _edit(self, request: ApprovalRequest) -> dict | None:
        command = request.input.get("command")
        if isinstance(command, str):
            new = await self._optional("new command › ")
            return {**request.input, "command": new} if new else None
        raw = await self._optional("new input as JSON › ")
        try:
            value = json.loads(raw)
        except json.JSONDecodeError as exc:
            self.console.print(Text(f"not JSON ({exc}); nothing changed", style="red"))
            return None
        return value if isinstance(value, dict) else None

    def _decision(
        self, request: ApprovalRequest, kind: str, message: str = "", edited: dict | None = None
    ) -> Decision:
        return Decision(
            kind=kind,  # type: ignore[arg-type]
            fingerprint=request.fingerprint,
            message=message,
            edited_input=edited,
            decided_by="operator",
        )
