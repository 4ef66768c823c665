"""A plan put before the operator in one screen: its goal, then each step on one line.

A deployment plan written out in full (every command, downtime, rollback and check) is some
170 lines at 80 columns: the operator would scroll back to read what they approve. The panel
shows what the plan does, one line a step with the hosts it touches, sized to the terminal's
rows; the full plan (`plan_details`, the plan's own rendering) is one key away at the prompt.
The request reaching here is already redacted, with control characters made visible.
"""

from __future__ import annotations

import textwrap
from typing import Any

from rich.console import Group, RenderableType
from rich.panel import Panel
from rich.text import Text

from agent.safety.approvals import ApprovalRequest

GOAL_LINES = 3
HOSTS_WIDTH = 18
# Rows the panel and prompt take besides the goal and the steps: the panel's two borders, the
# heading, the risks line, the `s` line, the prompt, and one row of what came before.
FRAME_ROWS = 7
MIN_STEP_ROWS = 5


def plan_panel(request: ApprovalRequest, width: int, height: int) -> Panel:
    """The plan in at most `height` rows of `width` columns (a plan of very many steps names
    how many more there are)."""
    plan = request.input
    steps: list[dict[str, Any]] = [s for s in plan.get("steps") or [] if isinstance(s, dict)]
    hosts = list(dict.fromkeys(h for step in steps for h in step.get("hosts") or []))
    inner = max(width - 4, 20)
    heading = Text(f"{request.tool}", style="bold")
    count = f"{len(steps)} step" + ("" if len(steps) == 1 else "s")
    heading.append(f": {count}" + (f" on {', '.join(hosts)}" if hosts else ""))
    goal = _clipped_lines(str(plan.get("goal", "")), inner, GOAL_LINES)
    proof = plan.get("proof") if isinstance(plan.get("proof"), dict) else None
    room = max(height - FRAME_ROWS - len(goal) - (1 if proof else 0), MIN_STEP_ROWS)
    parts: list[RenderableType] = [heading, Text("\n".join(goal)), _step_lines(steps, room, inner)]
    if proof:  # the call that proves it, covered too when its steps are approved with it
        parts.append(Text(_clip(f"then {_hosts(proof)}: {proof.get('title', '')}", inner)))
    risks = plan.get("risks") or []
    more = f"{len(risks)} risk" + ("" if len(risks) == 1 else "s") + " noted · " if risks else ""
    parts.append(Text(f"{more}c shows every command, downtime, rollback and check", "dim"))
    parts.append(Text("s: approve it and its steps as written (they then run without asking)"))
    return Panel(Group(*parts), title="approval needed", border_style="yellow")


def plan_details(request: ApprovalRequest) -> Text:
    """The whole plan as it was proposed: each step's commands, downtime, rollback and check."""
    return Text(request.summary or str(request.input))


def _step_lines(steps: list[dict[str, Any]], room: int, width: int) -> Text:
    """One line a step: number, hosts, title, cut with `…` at `width` columns."""
    shown = steps if len(steps) <= room else steps[: room - 1]
    number_width = len(f"{len(steps)}.")
    hosts_width = min(max((len(_hosts(s)) for s in shown), default=1), HOSTS_WIDTH)
    lines = Text()
    for number, step in enumerate(shown, 1):
        hosts = _clip(_hosts(step), hosts_width).ljust(hosts_width)
        title = " ".join(str(step.get("title", "")).split())
        line = Text(f"{number}.".rjust(number_width) + " ")
        line.append(hosts, style="cyan")
        line.append(" " + _clip(title, width - number_width - hosts_width - 2))
        lines.append_text(line)
        lines.append("\n")
    if len(shown) < len(steps):
        lines.append(f"… {len(steps) - len(shown)} more steps (c shows them all)\n", "dim")
    lines.rstrip()
    return lines


def _hosts(step: dict[str, Any]) -> str:
    return ",".join(step.get("hosts") or []) or "-"


def _clip(text: str, width: int) -> str:
    return text if len(text) <= width else text[: max(width - 1, 0)] + "…"


def _clipped_lines(text: str, width: int, count: int) -> list[str]:
    """`text` wrapped to `width`, at most `count` lines, the last ending in `…` when cut."""
    lines = textwrap.wrap(" ".join(text.split()), width) or [""]
    if len(lines) <= count:
        return lines
    kept = lines[:count]
    kept[-1] = kept[-1][: width - 1].rstrip() + "…"
    return kept
