"""Session events as lines a person reads; shared by replay, the chat face and the demo.

A transcript may be edited or damaged, so what one event shows is bounded: at most SHOWN_PARTS
blocks, todo items or findings, and SHOWN_CHARS of any text, each cut saying how much was left
out (a line of a million blocks once kept `scout replay` busy for minutes).
"""

from __future__ import annotations

from typing import Any

from rich.console import Console
from rich.markdown import Markdown
from rich.text import Text

from agent.faces.usage_view import usage_line
from agent.loop.events import (
    ApprovalDecisionEvent,
    ApprovalRequestEvent,
    ClientCall,
    ErrorEvent,
    Event,
    JobEvent,
    ModelResponse,
    Notice,
    SessionEnd,
    SessionStart,
    TodoUpdate,
    ToolCallEvent,
    ToolResultEvent,
    UserMessage,
    WorldUpdate,
)
from agent.safety.display import visible
from tools.jobs.render import duration

SHOWN_PARTS = 40
SHOWN_CHARS = 20_000
_TODO_MARKS = {"pending": "☐", "in_progress": "▶", "completed": "☑", "blocked": "⚠"}
# A fact (`info`: what a host can give, how many nodes a model needs) is not a warning.
_FINDING_MARKS = {"blocker": ("!", "bold red"), "warning": ("!", "yellow"), "info": ("·", "")}
_RISK_STYLES = {"read_only": "green", "mutating": "yellow", "destructive": "bold red"}


def call_line(name: str, summary: str, hosts: list[str]) -> str:
    """One line per call; control characters in the summary are shown, never interpreted."""
    summary = visible(summary)
    where = ", ".join(hosts)
    if not where or summary.startswith(where):
        return f"{name} {summary}".strip()
    return f"{name} {where}: {summary}".strip()


def dotted_lines(text: str, width: int) -> list[str]:
    """Join the ` · `-separated parts of `text` into lines of at most `width` columns.

    A headline such as `health ok · … · 4 streams 58.4 tok/s aggregate` then breaks only between
    its parts, never inside a number; a part longer than the width stays whole on its own line.
    """
    lines: list[str] = []
    for part in text.split(" · "):
        if lines and len(lines[-1]) + 3 + len(part) <= width:
            lines[-1] += " · " + part
        else:
            lines.append(part)
    return lines


def print_dotted(console: Console, text: str, *, indent: int = 0, style: str = "") -> None:
    """Print a ` · `-separated line so that it breaks between its parts, not inside them."""
    for line in dotted_lines(text, max(console.width - indent, 20)):
        console.print(Text(" " * indent + line, style=style))


def print_report(console: Console, text: str, *, style: str = "") -> None:
    """A result whose first line is a ` · ` headline and the rest a preformatted report (the
    proof's table): the headline breaks between its parts, the report prints as it is."""
    lines = text.strip().splitlines()
    if lines:
        print_dotted(console, lines[0], style=style)
    for line in lines[1:]:
        console.print(Text(line, style=style), soft_wrap=True)


def first_lines(text: str, count: int = 3, width: int = 160) -> list[str]:
    lines = [line[:width] for line in text.strip().splitlines() if line.strip()]
    if len(lines) > count:
        return [*lines[:count], f"… ({len(lines) - count} more lines)"]
    return lines


class EventRenderer:
    """Prints events to a rich console. With `stream_text`, the model's text was already shown."""

    def __init__(self, console: Console, *, stream_text: bool = False, verbose: bool = False):
        self.console = console
        self.stream_text = stream_text
        self.verbose = verbose
        self._call_names: dict[str, str] = {}

    def render(self, event: Event) -> None:
        handler = getattr(self, f"_on_{event.type}", None)
        if handler is not None:
            handler(event)

    def _on_session_start(self, event: SessionStart) -> None:
        title = f"session {event.session} · model {event.model} · mode {event.mode}"
        if event.resumed_from:
            title += " · resumed"
        self.console.print(Text(title, style="dim"))

    def _on_user_message(self, event: UserMessage) -> None:
        self.console.print(Text.assemble(("you › ", "bold cyan"), clip(event.text)))

    def _on_model_response(self, event: ModelResponse) -> None:
        if self.stream_text:
            return
        texts = [
            block["text"]
            for block in event.content
            if block.get("type") == "text" and str(block.get("text", "")).strip()
        ]
        for text in texts[:SHOWN_PARTS]:
            self.console.print(Markdown(clip(str(text))))
        self._more(len(texts), "text blocks")

    def _more(self, total: int, what: str) -> None:
        if total > SHOWN_PARTS:
            self.console.print(Text(f"    … {total - SHOWN_PARTS} more {what} not shown", "dim"))

    def _on_tool_call(self, event: ToolCallEvent) -> None:
        self._call_names[event.id] = event.name
        summary = clip(event.summary) or _compact(event.input)
        line = Text("  → ", style="dim")
        line.append(call_line(event.name, summary, event.hosts))
        if event.risk:
            line.append(f"  [{event.risk}]", style=_RISK_STYLES.get(event.risk, ""))
        self.console.print(line)

    def _on_tool_result(self, event: ToolResultEvent) -> None:
        duration = event.meta.get("duration_s")
        took = f" ({duration:.2f} s)" if isinstance(duration, int | float) else ""
        if event.is_error:
            header = Text(f"  ✗ {event.name}{took}: ", style="red")
            lines = first_lines(event.text, 2)
            header.append(lines[0] if lines else "failed")
            self.console.print(header)
            for extra in lines[1:]:
                self.console.print(Text(f"      {extra}", style="red dim"))
            return
        self.console.print(Text(f"  ✓ {event.name}{took}", style="green"))
        if event.meta.get("headline"):
            print_dotted(self.console, event.meta["headline"], indent=6, style="bold green")
        elif self.verbose:
            for line in first_lines(event.text, 6):
                self.console.print(Text(f"      {line}", style="dim"))

    def _on_approval_request(self, event: ApprovalRequestEvent) -> None:
        line = Text("  ? approval needed ", style="bold yellow")
        line.append(f"[{event.risk}] ", style=_RISK_STYLES.get(event.risk, ""))
        line.append(f"{event.tool}: {clip(event.reason)}")
        self.console.print(line)

    def _on_approval_decision(self, event: ApprovalDecisionEvent) -> None:
        ok = event.decision in {"approved", "approved_with_edit"}
        mark, style = ("✓", "green") if ok else ("✗", "red")
        if event.decision == "pending":  # asked for over MCP; the client comes back later
            mark, style = "…", "yellow"
        text = f"  {mark} {event.decision.replace('_', ' ')}"
        if event.decided_by:
            text += f" by {event.decided_by}"
        if event.message:
            text += f": {clip(event.message)}"
        self.console.print(Text(text, style=style))

    def _on_todo_update(self, event: TodoUpdate) -> None:
        self.console.print(Text("  todo", style="bold"))
        for item in event.items[:SHOWN_PARTS]:
            mark = _TODO_MARKS.get(item.get("status", "pending"), "☐")
            style = "dim" if item.get("status") == "completed" else ""
            self.console.print(Text(f"    {mark} {clip(str(item.get('content', '')))}", style))
        self._more(len(event.items), "todo items")

    def _on_world_update(self, event: WorldUpdate) -> None:
        for finding in event.findings[:SHOWN_PARTS]:
            severity = finding.get("severity", "info")
            mark, style = _FINDING_MARKS.get(severity, _FINDING_MARKS["warning"])
            fix = f"; {finding['fix']}" if finding.get("fix") else ""
            text = clip(f"{finding.get('message', '')}{fix}")
            self.console.print(Text(f"  {mark} {text}", style=style))
        self._more(len(event.findings), "findings")

    def _on_job(self, event: JobEvent) -> None:
        self.console.print(job_event_line(event))
        if event.kind == "end" and (event.exit_code != 0 or self.verbose):
            for line in first_lines(event.tail, 6):
                self.console.print(Text(f"      {line}", style="dim"))

    def _on_client_call(self, event: ClientCall) -> None:
        back = f" with approval {event.approval_id}" if event.approval_id else ""
        who = f"  ⇢ {event.client} ({event.principal}, {event.transport}) calls {event.tool}{back}"
        self.console.print(Text(clip(who), style="dim"))

    def _on_notice(self, event: Notice) -> None:
        style = "yellow" if event.level == "warning" else "dim"
        self.console.print(Text(f"  ⓘ {clip(event.message)}", style=style))

    def _on_error(self, event: ErrorEvent) -> None:
        self.console.print(Text(f"  error ({event.kind}): {clip(event.message)}", style="bold red"))

    def _on_session_end(self, event: SessionEnd) -> None:
        usage = event.usage
        parts = [f"session ended: {event.outcome}"]
        if event.reason:
            parts.append(event.reason)
        if usage:
            parts.append(usage_line(usage))
        self.console.print(Text(" · ".join(parts), style="dim"))


def job_event_line(event: JobEvent) -> Text:
    """One line per job event: started, a progress sample, ended, or unknown."""
    where = f"{event.host}/{event.name}"
    if event.kind == "start":
        return Text(f"  ▶ job {where} started: {clip(event.command)}", style="cyan")
    if event.kind == "unknown":
        return Text(f"  ? job {where}: state unknown ({clip(event.why or '')})", style="magenta")
    took = f" after {duration(event.elapsed_s)}" if event.elapsed_s is not None else ""
    progress = f" · {event.progress}" if event.progress else ""
    if event.kind == "end":
        ok = event.state == "exited" and event.exit_code == 0
        code = f" {event.exit_code}" if event.exit_code is not None else ""
        mark, style = ("✓", "green") if ok else ("✗", "red")
        return Text(f"  {mark} job {where} {event.state}{code}{took}{progress}", style=style)
    return Text(f"    job {where} {event.state}{took}{progress}", style="dim")


def clip(text: str) -> str:
    """`text`, or its first SHOWN_CHARS characters and how many more there were."""
    if len(text) <= SHOWN_CHARS:
        return text
    return f"{text[:SHOWN_CHARS]}… ({len(text) - SHOWN_CHARS} more characters not shown)"


def _compact(data: dict[str, Any]) -> str:
    parts: list[str] = []
    size = 0
    for key, value in data.items():
        parts.append(f"{key}={str(value)[:120]}")
        size += len(parts[-1]) + 2
        if size > 120:
            break
    text = ", ".join(parts)
    return text if len(text) <= 120 else text[:117] + "…"
