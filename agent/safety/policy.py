"""The policy's answer for one call, before any human: allow, ask or deny, and why.

Order: a deny rule refuses; read-only work runs (unless an ask rule says ask); in `plan` mode
nothing else runs; before a plan is approved nothing else runs; mutating work that allow rules
cover runs (in `ask` mode only rules the operator added this session count; destructive work
always asks); `ci` mode refuses whatever would need a human. The gate acts on this answer, and
`scout policy check` prints it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

from agent.safety.modes import Mode
from agent.safety.rules import RuleSet
from tools.risk.assessment import Risk

Decision = Literal["allow", "ask", "deny"]
Ground = Literal["deny_rule", "read_only", "plan_mode", "no_plan", "allow_rule", "ci", "ask"]


@dataclass(frozen=True)
class PolicyAnswer:
    decision: Decision
    ground: Ground
    why: str


def policy_answer(
    *,
    tool: str,
    tool_input: dict[str, Any],
    hosts: list[str],
    risk: Risk,
    reason: str,
    rules: RuleSet,
    mode: Mode,
    plan_approved: bool,
) -> PolicyAnswer:
    deny = rules.careful_match("deny", tool, tool_input, hosts)
    if deny is not None:
        return PolicyAnswer("deny", "deny_rule", f"denied by rule `{deny.text}` ({deny.source})")
    ask_rule = rules.careful_match("ask", tool, tool_input, hosts)
    if risk == Risk.READ_ONLY and ask_rule is None:
        return PolicyAnswer("allow", "read_only", reason)
    if risk > Risk.READ_ONLY and mode == "plan":
        return PolicyAnswer("deny", "plan_mode", f"plan mode runs only read-only work; {reason}")
    if risk > Risk.READ_ONLY and not plan_approved:
        return PolicyAnswer("deny", "no_plan", f"no plan is approved yet; {reason}")
    allows = rules.covering_allows(tool, tool_input, hosts) if ask_rule is None else None
    if allows and risk == Risk.MUTATING:
        counted = [r for r in allows if mode != "ask" or r.source.startswith("operator")]
        if len(counted) == len(allows):
            names = ", ".join(f"`{r.text}`" for r in allows)
            return PolicyAnswer("allow", "allow_rule", f"allowed by {names}; {reason}")
    if mode == "ci":
        return PolicyAnswer("deny", "ci", f"needs a human, and ci mode has none; {reason}")
    if ask_rule is not None:
        return PolicyAnswer("ask", "ask", f"rule `{ask_rule.text}` says ask; {reason}")
    if risk == Risk.DESTRUCTIVE:
        return PolicyAnswer("ask", "ask", f"destructive work always asks; {reason}")
    if allows:
        return PolicyAnswer(
            "ask", "ask", f"in ask mode only rules added this session allow; {reason}"
        )
    return PolicyAnswer("ask", "ask", f"no allow rule covers all of it; {reason}")
