"""The chat face's text for a turn that fails: each retry said once, the final error once."""

from __future__ import annotations

import io
from types import SimpleNamespace

from rich.console import Console

from agent.faces.chat import _send
from agent.faces.chat_view import ChatView
from agent.standin.server import MessagesAPIServer
from tests.support.session_kit import make_session


async def test_a_failed_turn_is_shown_once_and_its_retries_read_well(tmp_path):
    overloaded = {"stream_error": {"type": "overloaded_error", "message": "Overloaded"}}
    out = io.StringIO()
    view = ChatView(Console(file=out, width=120))
    with MessagesAPIServer([overloaded] * 3) as server:
        session = make_session(server.url, [], tmp_path, listeners=[view])
        await _send(SimpleNamespace(session=session), view, "hello")  # type: ignore[arg-type]
    lines = [line.strip() for line in out.getvalue().splitlines() if line.strip()]
    assert lines == [
        "ⓘ the model call failed (the API reported an error mid-answer: Overloaded); trying "
        "again (attempt 2)",
        "ⓘ the model call failed (the API reported an error mid-answer: Overloaded); trying "
        "again (attempt 3)",
        "error (model): The API failed (200): Overloaded; try again shortly.",
    ]
