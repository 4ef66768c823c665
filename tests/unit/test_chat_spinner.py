"""A running call's spinner turns: each row keeps one spinner, so its frame follows the time
since that call started (a spinner made afresh at every refresh showed its first frame only)."""

from __future__ import annotations

import io

from rich.console import Console

from agent.faces.chat_view import ChatView
from agent.loop.events import ToolCallEvent

CALL = ToolCallEvent(id="toolu_1", name="recon", input={}, hosts=["spark-a"], summary="probe")


def test_the_spinner_of_a_running_call_moves_between_refreshes() -> None:
    now = [100.0]
    console = Console(file=io.StringIO(), width=100, color_system=None, get_time=lambda: now[0])
    view = ChatView(console)
    view.on_event(CALL)
    view.on_call_started("toolu_1", "recon", "probe", ["spark-a"])
    view._close_live()  # draw by hand, at chosen times
    marks = []
    for _ in range(4):
        out = io.StringIO()
        Console(file=out, width=100, color_system=None, get_time=lambda: now[0]).print(
            view._batch_table()
        )
        marks.append(out.getvalue().split()[0])
        now[0] += 0.1  # the live region refreshes 8 times a second
    assert len(set(marks)) == 4, marks
