"""The chat face's progress bars: one per running job, fed by the session's job events.

While job_wait polls (no model turns), every recorded progress sample moves the job's bar; a
job without a known fraction (an engine loading, a benchmark) gets a pulsing bar. A job leaves
the bars when it ends or its state becomes unknown; that line is printed by the renderer.
"""

from __future__ import annotations

from rich.console import RenderableType
from rich.progress_bar import ProgressBar
from rich.table import Table
from rich.text import Text

from agent.loop.events import JobEvent
from tools.jobs.render import duration

BAR_WIDTH = 24


class JobBars:
    def __init__(self) -> None:
        self.running: dict[str, JobEvent] = {}

    def take(self, event: JobEvent) -> bool:
        """Follow one job event; True when the bars changed."""
        key = f"{event.host}/{event.name}"
        if event.kind in ("end", "unknown"):
            return self.running.pop(key, None) is not None
        self.running[key] = event
        return True

    def clear(self) -> None:
        self.running.clear()

    def renderable(self, width: int) -> RenderableType:
        table = Table.grid(padding=(0, 1))
        table.add_column(width=20, no_wrap=True, overflow="ellipsis", style="cyan")
        table.add_column(width=BAR_WIDTH, no_wrap=True)
        table.add_column(width=6, justify="right", no_wrap=True)
        table.add_column(
            max_width=max(width - BAR_WIDTH - 32, 16), no_wrap=True, overflow="ellipsis"
        )
        for key, event in self.running.items():
            fraction = event.fraction
            bar = ProgressBar(
                total=1.0 if fraction is not None else None,
                completed=fraction or 0.0,
                width=BAR_WIDTH,
            )
            took = duration(event.elapsed_s) if event.elapsed_s is not None else ""
            table.add_row(key, bar, took, Text(event.progress or event.state, style="dim"))
        return table
