"""The chat face's progress bars: one per running job, fed by the session's job events.

While job_wait polls (no model turns), every recorded progress sample moves the job's bar; a
job without a known fraction (an engine loading, a benchmark) gets a pulsing bar. Between
samples a running job's elapsed time goes on counting from the last sample. A job leaves the
bars when it ends or its state becomes unknown; that line is printed by the renderer. Bars are
only ever drawn live: they never reach the scrollback or piped output (chat_view.py).
"""

from __future__ import annotations

import time
from collections.abc import Callable

from rich.console import RenderableType
from rich.progress_bar import ProgressBar
from rich.table import Table
from rich.text import Text

from agent.loop.events import JobEvent
from tools.jobs.render import duration

BAR_WIDTH = 24
ELAPSED_WIDTH = 7  # `59m59s`, `12h05m`
MIN_NAME_WIDTH = 12
MIN_PROGRESS_WIDTH = 16


class JobBars:
    def __init__(self, clock: Callable[[], float] = time.monotonic) -> None:
        self.running: dict[str, JobEvent] = {}
        self._clock = clock
        self._seen: dict[str, float] = {}  # when each job's latest event arrived

    def take(self, event: JobEvent) -> bool:
        """Follow one job event; True when the bars changed."""
        key = f"{event.host}/{event.name}"
        if event.kind in ("end", "unknown"):
            self._seen.pop(key, None)
            return self.running.pop(key, None) is not None
        self.running[key] = event
        self._seen[key] = self._clock()
        return True

    def clear(self) -> None:
        self.running.clear()
        self._seen.clear()

    def elapsed(self, key: str) -> str:
        """How long the job has run: its last sample's time, plus the time since that sample."""
        event = self.running[key]
        if event.elapsed_s is None:
            return ""
        since = self._clock() - self._seen.get(key, self._clock())
        counting = event.state in ("running", "starting")
        return duration(event.elapsed_s + (int(since) if counting else 0))

    def renderable(self, width: int) -> RenderableType:
        """The bars in `width` columns: a job's name takes what it needs, as long as its
        progress keeps MIN_PROGRESS_WIDTH of them."""
        longest = max((len(key) for key in self.running), default=0)
        room = width - BAR_WIDTH - ELAPSED_WIDTH - 3 - MIN_PROGRESS_WIDTH
        name_width = min(longest, max(room, MIN_NAME_WIDTH))
        table = Table.grid(padding=(0, 1))
        table.add_column(width=name_width, no_wrap=True, overflow="ellipsis", style="cyan")
        table.add_column(width=BAR_WIDTH, no_wrap=True)
        table.add_column(width=ELAPSED_WIDTH, justify="right", no_wrap=True)
        rest = max(width - name_width - BAR_WIDTH - ELAPSED_WIDTH - 3, 10)
        table.add_column(max_width=rest, no_wrap=True, overflow="ellipsis")
        for key, event in self.running.items():
            fraction = event.fraction
            bar = ProgressBar(
                total=1.0 if fraction is not None else None,
                completed=fraction or 0.0,
                width=BAR_WIDTH,
            )
            progress = Text(event.progress or event.state, style="dim")
            table.add_row(key, bar, self.elapsed(key), progress)
        return table
