"""Secret redaction, applied before anything reaches the transcript, logs, screen, model or disk.

Patterns catch the shapes secrets take in this field's tools (`secret_patterns`): API tokens by
their prefixes (Anthropic, OpenAI, Hugging Face, NGC, GitHub, GitLab, AWS, GCP, Slack, npm,
PyPI), JWTs, PEM and PGP private keys (also a key body whose BEGIN line was cut off), crypt
hashes, passwords in URLs, `NAME_TOKEN=`/`*_PASS=` assignments, `"password": "…"` and docker
config `"auth"` in JSON, and password options on command lines (`--password X`, `-pX` for mysql,
`docker login -p`). Exact values the session knows are secret (its own API key, a webhook
secret) are replaced wherever they appear, whatever their shape. In JSON-like data a value
under a secret-looking key is masked whole.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from agent.safety.secret_patterns import MASK, PATTERNS, SECRET_KEY

__all__ = ["MASK", "Redactor"]


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
        for pattern, replacement in PATTERNS:
            value = pattern.sub(replacement, value)
        return value

    def data(self, value: Any) -> Any:
        if isinstance(value, str):
            return self.text(value)
        if isinstance(value, dict):
            return {
                key: MASK
                if isinstance(item, str) and item and SECRET_KEY.fullmatch(str(key))
                else self.data(item)
                for key, item in value.items()
            }
        if isinstance(value, list | tuple):
            return [self.data(item) for item in value]
        return value
