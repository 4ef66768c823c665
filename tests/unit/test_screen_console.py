"""What a host printed reaches the screen as it was written: `:fire:` stays text."""

from __future__ import annotations

import pytest

from agent.faces.console import screen_console


def test_emoji_codes_are_printed_as_written(capsys: pytest.CaptureFixture[str]) -> None:
    screen_console().print("container warmup:fire: done :thumbs_up:")
    assert capsys.readouterr().out == "container warmup:fire: done :thumbs_up:\n"
