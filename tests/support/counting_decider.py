"""The example receiver's rules decider, counting what it was asked: how many decisions a
headless session needed is what the operator behind a webhook would see."""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any

from tests.support.example_receiver import receiver


class CountingDecider:
    """The receiver's rules (a file), with a record of every request they decided."""

    def __init__(self, rules: Path) -> None:
        self.inner = receiver.RulesDecider.from_file(rules)
        self.asked: list[dict[str, Any]] = []
        self._lock = threading.Lock()

    def __call__(self, request: dict[str, Any]) -> dict[str, Any]:
        with self._lock:  # the receiver answers each request in its own thread
            self.asked.append(request)
        return self.inner(request)
