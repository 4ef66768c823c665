"""What the chat face draws: the streamed answer, a live panel per batch, todo and findings.

One rich `Live` region shows whatever is in motion (the answer being streamed, then the batch
being run); it is transient, so what it last showed is printed once, for good, when it settles.
While an approval is pending or a prompt waits for the operator, nothing is drawn: the live region
is erased (no half-finished rows stay above the question) and whatever happens meanwhile is held
back and printed after the answer, so the prompt stays visible until it is answered.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field

from prompt_toolkit import PromptSession
from rich.console import Console, Group, RenderableType
from rich.live import Live
from rich.markdown import Markdown
from rich.spinner import Spinner
from rich.table import Table
from rich.text import Text

from agent.faces.job_bars import JobBars
from agent.faces.render import EventRenderer, print_dotted
from agent.loop.events import (
    ApprovalDecisionEvent,
    ApprovalRequestEvent,
    Event,
    JobEvent,
    ModelResponse,
    SessionStart,
    ToolCallEvent,
    ToolResultEvent,
    UserMessage,
)
from agent.loop.recorder import SessionListener
from agent.safety.display import visible


@dataclass
class CallRow:
    call_id: str
    tool: str
    summary: str
    hosts: list[str] = field(default_factory=list)
    started: float | None = None
    finished: float | None = None
    status: str = "queued"
    ok: bool | None = None

    def elapsed(self) -> str:
        if self.started is None:
            return ""
        end = self.finished if self.finished is not None else time.monotonic()
        return f"{end - self.started:5.1f}s"


class ChatView(SessionListener):
    def __init__(self, console: Console) -> None:
        self.console = console
        self.renderer = EventRenderer(console, stream_text=True)
        self._live: Live | None = None
        self._text = ""
        self._rows: dict[str, CallRow] = {}
        self.jobs = JobBars()
        self._pending_approvals = 0
        self._prompting = False
        self._held: list[Callable[[], None]] = []

    # -- asking the operator --------------------------------------------------------------
    async def ask(self, prompt: PromptSession[str], question: str) -> str:
        """Ask on the terminal; nothing is drawn over or above the question until it is answered."""
        self._close_live()
        self._prompting = True
        try:
            # handle_sigint=False: the Ctrl-C handler of the running work stays in place (the
            # prompt would remove it on return); Ctrl-C typed at the prompt is a key to it.
            return await prompt.prompt_async(question, handle_sigint=False)
        finally:
            self._prompting = False
            self._resume()

    @property
    def _quiet(self) -> bool:
        """True while an approval is pending or a prompt is open: draw nothing, hold output."""
        return self._prompting or self._pending_approvals > 0

    def _show(self, action: Callable[[], None]) -> None:
        if self._quiet:
            self._held.append(action)
        else:
            action()

    def _resume(self) -> None:
        if self._quiet:
            return
        held, self._held = self._held, []
        for action in held:
            action()
        if self._text or self._rows or self.jobs.running:
            self._ensure_live()

    # -- the live region ------------------------------------------------------------------
    def _renderable(self) -> RenderableType:
        parts: list[RenderableType] = []
        if self._text:
            parts.append(Markdown(self._text))
        if self._rows:
            parts.append(self._batch_table())
        if self.jobs.running:
            parts.append(self.jobs.renderable(self.console.width))
        return Group(*parts)

    def _ensure_live(self) -> None:
        if self._live is None and not self._quiet:
            self._live = Live(
                console=self.console,
                get_renderable=self._renderable,
                refresh_per_second=8,
                transient=True,
                redirect_stdout=False,
                redirect_stderr=False,
            )
            self._live.start()

    def _close_live(self) -> None:
        """Erase the live region; its content stays in memory and is drawn again later."""
        if self._live is not None:
            self._live.stop()
            self._live = None

    def settle(self) -> None:
        """End the live region and print what it showed, once, to stay in the scrollback."""
        self._close_live()
        if self._text or self._rows or self.jobs.running:
            final = self._renderable()
            self._show(lambda: self.console.print(final))
        self._text = ""
        self._rows = {}
        self.jobs.clear()  # drawn again from the next job event

    def _batch_table(self) -> Table:
        table = Table.grid(padding=(0, 1))
        hosts_width, tool_width, time_width, status_width = 12, 14, 6, 10
        summary_width = max(self.console.width - hosts_width - tool_width - 30, 16)
        table.add_column(width=1, no_wrap=True)
        table.add_column(width=hosts_width, no_wrap=True, overflow="ellipsis", style="cyan")
        table.add_column(width=tool_width, no_wrap=True, overflow="ellipsis")
        table.add_column(max_width=summary_width, no_wrap=True, overflow="ellipsis")
        table.add_column(width=time_width, justify="right", no_wrap=True)
        table.add_column(width=status_width, no_wrap=True)
        for row in self._rows.values():
            if row.ok is None:
                mark: RenderableType = (
                    Spinner("dots", style="yellow") if row.started else Text("·", style="dim")
                )
            else:
                mark = Text("✓", style="green") if row.ok else Text("✗", style="red")
            status_style = "green" if row.ok else ("red" if row.ok is False else "dim")
            table.add_row(
                mark,
                _hosts_label(row.hosts),
                row.tool,
                _clip(visible(row.summary), summary_width),
                row.elapsed(),
                Text(row.status, style=status_style),
            )
        return table

    # -- listener hooks -------------------------------------------------------------------
    def on_text(self, delta: str) -> None:
        if self._rows:
            self.settle()
        self._text += delta
        self._ensure_live()

    def on_call_started(self, call_id: str, tool: str, summary: str, hosts: list[str]) -> None:
        row = self._rows.get(call_id)
        if row is not None:
            row.started = time.monotonic()
            row.status = "running"
            self._ensure_live()

    def on_event(self, event: Event) -> None:
        if isinstance(event, ModelResponse):
            self.settle()  # the streamed answer is final; calls get their own rows
            return
        if isinstance(event, ToolCallEvent):
            self._rows[event.id] = CallRow(
                event.id, event.name, event.summary or event.name, event.hosts
            )
            self._ensure_live()
            return
        if isinstance(event, ToolResultEvent):
            self._finish_row(event)
            self._ensure_live()
            if all(row.ok is not None for row in self._rows.values()):
                self.settle()
            return
        if isinstance(event, JobEvent):
            if self.jobs.take(event):
                self._ensure_live()
            if event.kind in ("end", "unknown"):
                self._show(lambda: self.renderer.render(event))
            return
        if isinstance(event, UserMessage | SessionStart):
            return  # the prompt line and the banner already show these
        if isinstance(event, ApprovalRequestEvent):
            self._pending_approvals += 1
            self._close_live()  # the approver shows the request and asks next
            return
        if isinstance(event, ApprovalDecisionEvent):
            self._pending_approvals = max(self._pending_approvals - 1, 0)
            self.renderer.render(event)
            self._resume()
            return
        self._show(lambda: self.renderer.render(event))  # above the live region, if any

    def _finish_row(self, event: ToolResultEvent) -> None:
        row = self._rows.get(event.id)
        if row is None:
            row = self._rows[event.id] = CallRow(event.id, event.name, event.name)
        row.finished = time.monotonic()
        if row.started is None:
            row.started = row.finished
        row.ok = not event.is_error
        exit_status = event.meta.get("exit_status")
        if event.meta.get("cancelled"):
            row.status = "cancelled"
        elif event.meta.get("gated"):
            row.status = "refused"
        elif event.meta.get("timed_out"):
            row.status = "timed out"
        elif exit_status is not None:
            row.status = f"exit {exit_status}"
        else:
            row.status = "done" if row.ok else "failed"
        headline = event.meta.get("headline")
        if headline and not event.is_error:
            self._show(lambda: print_dotted(self.console, headline, indent=2, style="bold green"))
        if event.is_error and not event.meta.get("cancelled"):
            first = event.text.strip().splitlines()[0] if event.text.strip() else "failed"
            line = Text(f"  ✗ {event.name}: {first[:200]}", style="red")
            self._show(lambda: self.console.print(line))


def _hosts_label(hosts: list[str]) -> str:
    if not hosts:
        return "-"
    return hosts[0] if len(hosts) == 1 else f"{hosts[0]} +{len(hosts) - 1}"


def _clip(text: str, width: int) -> str:
    text = " ".join(text.split())
    return text if len(text) <= width else text[: width - 1] + "…"
