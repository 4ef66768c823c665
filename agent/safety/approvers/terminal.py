"""The terminal approver: shows what would run and asks y / n / e / a on the operator's terminal.

`y` approves once; `n` denies (with an optional message the model will read); `e` edits the
command (or the JSON input) and approves the edit; `a` approves and allows exactly this call for
the rest of the session (offered only when a rule can say it exactly). For a plan, `s` approves
it and its steps as written: each step's calls then run without another question, as long as
they are exactly what the plan says. A plan is shown one line a step (plan_panel.py); `c`
prints every command, downtime, rollback and check, then asks again. Anything else asks again;
end of input denies. The gate hands over the request already redacted, with control characters
made visible.
"""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable

from rich.console import Console
from rich.panel import Panel
from rich.text import Text

from agent.safety.approvals import ApprovalRequest, Decision
from agent.safety.approvers.plan_panel import plan_details, plan_panel
from agent.safety.rules import RuleSet
from agent.safety.session_rules import session_rule

AskLine = Callable[[str], Awaitable[str]]

_RISK_STYLE = {
    "read_only": "green",
    "mutating": "yellow",
    "destructive": "bold red",
    "plan": "cyan",
}


class TerminalApprover:
    def __init__(self, console: Console, ask: AskLine, rules: RuleSet | None = None):
        """`rules`: the session's rules, which an `a` answer adds to; without them no `a`."""
        self.console = console
        self.ask = ask
        self.rules = rules

    def show(self, request: ApprovalRequest) -> None:
        if request.is_plan:
            width, height = self.console.size
            self.console.print(plan_panel(request, width, height))
            return
        body = Text()
        body.append(f"{request.tool}", style="bold")
        if request.hosts:
            body.append(f" on {', '.join(request.hosts)}")
        body.append("\n")
        command = request.input.get("command")
        body.append(f"$ {command}\n" if isinstance(command, str) else f"{request.summary}\n")
        for name, value in (request.input.get("env") or {}).items():
            body.append(f"  env {name}={value}\n")
        if request.input.get("cwd"):
            body.append(f"  in {request.input['cwd']}\n")
        body.append("risk: ")
        body.append(request.risk, style=_RISK_STYLE.get(request.risk, ""))
        body.append(f" — {request.reason}\n")
        if request.plan_step:
            body.append(f"serves: {request.plan_step}\n")
        self.console.print(Panel(body, title="approval needed", border_style="yellow"))

    async def decide(self, request: ApprovalRequest) -> Decision:
        self.show(request)
        rules = self.rules
        rule = session_rule(request, rules.shapes.get(request.tool)) if rules is not None else None
        can_allow = rule is not None
        is_plan = request.is_plan
        keys = "[y]es once / [n]o / [e]dit" + (" / [a]llow exactly this" if can_allow else "")
        if is_plan:
            keys = "[y]es / [s]teps too / [n]o / [e]dit / [c]ommands"
        while True:
            try:
                answer = (await self.ask(f"approve? {keys} › ")).strip().lower()
            except (EOFError, KeyboardInterrupt):
                return self._decision(request, "denied", "no answer (input closed)")
            if answer in {"y", "yes"}:
                return self._decision(request, "approved")
            if answer in {"s", "steps"} and is_plan:
                decision = self._decision(request, "approved", "and its steps as written")
                return decision.model_copy(update={"approve_steps": True})
            if answer in {"c", "commands"} and is_plan:
                self.console.print(plan_details(request))
                continue
            if answer in {"n", "no"}:
                message = await self._optional("tell the agent why (optional) › ")
                return self._decision(request, "denied", message or "the operator said no")
            if answer in {"e", "edit"}:
                edited = await self._edit(request)
                if edited is not None:
                    return self._decision(request, "approved_with_edit", edited=edited)
                continue
            if answer in {"a", "allow"} and rule is not None and rules is not None:
                rules.allow_for_session(rule)
                self.console.print(Text(f"allowed for this session: {rule}", style="green"))
                return self._decision(request, "approved", f"and allowed {rule} for the session")
            self.console.print("answer y, n, e" + (" or a" if can_allow else "") +
                               (", s or c" if is_plan else ""))  # fmt: skip

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
