"""Secret redaction, applied before anything reaches the transcript, logs, screen or model.

Patterns catch the shapes secrets take (API keys, bearer tokens, Hugging Face tokens, passwords in
URLs, private-key blocks, `password=` pairs); exact values the session knows are secret (its own
API key, a webhook secret) are replaced wherever they appear, whatever their shape.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Any

MASK = "[REDACTED]"

_PATTERNS: list[tuple[re.Pattern[str], str]] = [
    (
        re.compile(
            r"-----BEGIN ([A-Z0-9 ]*)PRIVATE KEY-----.*?(?:-----END \1PRIVATE KEY-----|\Z)", re.S
        ),
        f"-----BEGIN PRIVATE KEY----- {MASK} -----END PRIVATE KEY-----",
    ),
    (re.compile(r"\bsk-ant-[A-Za-z0-9_\-]{8,}"), MASK),
    (re.compile(r"\bsk-[A-Za-z0-9_\-]{20,}"), MASK),
    (re.compile(r"\bhf_[A-Za-z0-9]{16,}"), MASK),
    (re.compile(r"\bgh[pousr]_[A-Za-z0-9]{20,}"), MASK),
    (re.compile(r"\bxox[abpr]-[A-Za-z0-9\-]{10,}"), MASK),
    (re.compile(r"\bAKIA[0-9A-Z]{16}\b"), MASK),
    (re.compile(r"(?i)\b(bearer)\s+[A-Za-z0-9._~+/=\-]{8,}"), rf"\1 {MASK}"),
    (
        re.compile(r"(?i)\b(x-api-key|authorization)(\s*[:=]\s*)(?!bearer\b)[^\s'\"]{8,}"),
        rf"\1\2{MASK}",
    ),
    # A scheme starts only where a run of scheme characters starts (so a page of letters is
    # scanned once, not once per letter).
    (
        re.compile(r"(?<![a-zA-Z0-9+.\-])([a-zA-Z][a-zA-Z0-9+.\-]*://[^:/\s@'\"]+:)[^@\s/'\"]+@"),
        rf"\1{MASK}@",
    ),
    # The name is taken whole (possessive), once the lookahead has seen a keyword in it: the
    # form `[A-Z0-9_]*keyword[A-Z0-9_]*` retried every split of a long word (quadratic).
    (
        re.compile(
            r"(?i)\b(?=[A-Z0-9_]*?(?:password|passwd|secret|token|api_key|apikey))"
            r"([A-Z0-9_]*+)(\s*+[=:]\s*+)(['\"]?)(?!\[REDACTED\])[^\s'\"]{4,}\3"
        ),
        rf"\1\2\3{MASK}\3",
    ),
]


class Redactor:
    """Masks secrets in strings and in nested JSON-like data."""

    def __init__(self, known_secrets: Iterable[str] = ()) -> None:
        self._known: set[str] = set()
        for secret in known_secrets:
            self.add_secret(secret)

    def add_secret(self, secret: str | None) -> None:
        """Remember an exact value to mask; short values are ignored to avoid masking noise."""
        if secret and len(secret) >= 6:
            self._known.add(secret)

    def text(self, value: str) -> str:
        for secret in sorted(self._known, key=len, reverse=True):
            if secret in value:
                value = value.replace(secret, MASK)
        for pattern, replacement in _PATTERNS:
            value = pattern.sub(replacement, value)
        return value

    def data(self, value: Any) -> Any:
        if isinstance(value, str):
            return self.text(value)
        if isinstance(value, dict):
            return {key: self.data(item) for key, item in value.items()}
        if isinstance(value, list | tuple):
            return [self.data(item) for item in value]
        return value
