"""What the loop asks of redaction before anything leaves: mask secrets in text and in data.

The loop masks tool output before the model reads it and every event before the transcript
holds it; the masking itself is safety's (agent/safety/redact.py:Redactor), handed in by the
builder.
"""

from __future__ import annotations

from typing import Any, Protocol


class Redaction(Protocol):
    def text(self, value: str) -> str: ...

    def data(self, value: Any) -> Any: ...
