"""Driving a terminal program in tmux on a private socket, the way a person would use it."""

from __future__ import annotations

import asyncio
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

from tests.support.waiting import WAIT_S


class TmuxScreen:
    def __init__(self, socket: Path, width: int = 100, height: int = 40) -> None:
        self.socket = socket
        self.width, self.height = width, height

    def _tmux(self, *args: str) -> str:
        done = subprocess.run(
            ["tmux", "-S", str(self.socket), *args], capture_output=True, text=True, timeout=10
        )
        return done.stdout

    def start(self, command: str) -> None:
        self._tmux("new-session", "-d", "-x", str(self.width), "-y", str(self.height), command)
        self._tmux("set-option", "-g", "history-limit", "5000")

    def start_chat(self, home: Path, api_url: str, inventory: Path) -> None:
        """`scout chat` against the Messages-API server at `api_url`, as a person starts it
        (the pane stays 30 s after it exits, so its last screen can still be read)."""
        env = f"SCOUT_HOME={home} ANTHROPIC_API_KEY=test ANTHROPIC_BASE_URL={api_url} NO_COLOR=1"
        scout = f"{os.path.dirname(sys.executable)}/scout"
        self.start(f"env {env} {scout} chat --inventory {inventory}; sleep 30")

    def send(self, *keys: str) -> None:
        self._tmux("send-keys", *keys)

    def screen(self) -> str:
        """Everything the terminal shows, scrollback included."""
        return self._tmux("capture-pane", "-p", "-S", "-3000")

    async def wait_for(self, text: str, timeout: float = WAIT_S, after: int = 0) -> str:
        """Wait until `text` appears past character `after` of the screen; fail with the screen.
        The timeout only bounds a hang (tests/support/waiting.py)."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            screen = self.screen()
            if text in screen[after:]:
                return screen
            await asyncio.sleep(0.1)
        raise AssertionError(f"{text!r} never appeared; the screen was:\n{self.screen()}")

    def pane_pid(self) -> int:
        """The process the pane runs (the shell of the `start` command)."""
        return int(self._tmux("display-message", "-p", "#{pane_pid}").strip())

    def visible(self) -> list[str]:
        """The lines the terminal shows right now, without the scrollback or trailing blanks."""
        lines = self._tmux("capture-pane", "-p").rstrip("\n").splitlines()
        while lines and not lines[-1].strip():
            lines.pop()
        return lines

    def kill(self) -> None:
        self._tmux("kill-server")


def tmux_missing() -> str | None:
    return None if shutil.which("tmux") else "tmux is not installed"
