"""Secret redaction, applied before anything reaches the transcript, logs, screen, model or disk.

Secrets are found by class, each in its own module, and only the secret is replaced:
- exact values the session knows are secret (its API key, a webhook secret), whatever their shape;
- private-key blocks, from BEGIN to the END of the same kind (`secret_blocks`);
- base64 that wraps a secret (`.dockerconfigjson`, kubeconfig `client-key-data`): the blob is
  decoded, redacted in turn, and masked whole when anything inside was a secret;
- tokens known by their vendor's prefix (`secret_tokens`);
- values known by where they stand: after a secret name, in a URL's userinfo, after a login,
  in a header (`secret_patterns`, judging names with `secret_names`).
In JSON-like data a string under a secret name is masked whole, by the same judgement of names.
"""

from __future__ import annotations

import base64
import binascii
import re
from collections.abc import Iterable
from typing import Any

from agent.safety.secret_blocks import mask_blocks
from agent.safety.secret_names import MASK, holds_secret
from agent.safety.secret_patterns import apply_rules
from agent.safety.secret_tokens import TOKEN

__all__ = ["MASK", "Redactor"]

# Base64 of 40+ characters, on one line or wrapped (`base64` wraps at 76).
_B64_END = r"(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?"
BASE64_BLOB = re.compile(
    rf"(?<![A-Za-z0-9+/=_\-])(?:[A-Za-z0-9+/]{{4}}){{10,}}+{_B64_END}"
    rf"(?:\r?\n(?:[A-Za-z0-9+/]{{4}})++{_B64_END})*(?![A-Za-z0-9+/=_\-])"
)
TEXT_BYTES = re.compile(r"[\t\n\r\x20-\x7e\u00a0-\uffff]*")
MAX_DEPTH = 2  # base64 inside base64 inside text
# Texts already redacted are remembered, up to this many characters in all, oldest forgotten
# first: a session writes the same names, commands and tool inputs in event after event (a
# tool input twice: the model's turn, then the call), and a megabyte costs a fifth of a second.
REMEMBERED_CHARS = 8 * 1024 * 1024


class Redactor:
    """Masks secrets in strings and in nested JSON-like data."""

    def __init__(self, known_secrets: Iterable[str] = ()) -> None:
        self._known: set[str] = set()
        self._seen: dict[str, str] = {}  # texts already redacted, oldest first
        self._seen_chars = 0
        for secret in known_secrets:
            self.add_secret(secret)

    def add_secret(self, secret: str | None) -> None:
        """Remember an exact value to mask; short values are ignored to avoid masking noise."""
        if secret and len(secret) >= 6:
            self._known.add(secret)
            self._seen.clear()  # redacted before this secret was known
            self._seen_chars = 0

    def text(self, value: str) -> str:
        known = self._seen.get(value)
        if known is not None:
            return known
        clean = self._text(value, depth=0)
        if len(value) <= REMEMBERED_CHARS:
            self._seen[value] = clean
            self._seen_chars += len(value)
            while self._seen_chars > REMEMBERED_CHARS:
                oldest = next(iter(self._seen))
                del self._seen[oldest]
                self._seen_chars -= len(oldest)
        return clean

    def _text(self, value: str, depth: int) -> str:
        for secret in sorted(self._known, key=len, reverse=True):
            if secret in value:
                value = value.replace(secret, MASK)
        value = mask_blocks(value)
        if depth < MAX_DEPTH:
            value = BASE64_BLOB.sub(lambda m: self._wrapped(m.group(), depth), value)
        value = TOKEN.sub(MASK, value)
        return apply_rules(value)

    def _wrapped(self, blob: str, depth: int) -> str:
        """A base64 blob whose decoded text holds a secret is masked whole."""
        try:
            inner = base64.b64decode(re.sub(r"\s", "", blob), validate=True).decode("utf-8")
        except (binascii.Error, UnicodeDecodeError):
            return blob
        if not TEXT_BYTES.fullmatch(inner):
            return blob
        return MASK if self._text(inner, depth + 1) != inner else blob

    def data(self, value: Any) -> Any:
        if isinstance(value, str):
            return self.text(value)
        if isinstance(value, dict):
            return {
                key: MASK
                if isinstance(item, str) and item and holds_secret(str(key), item)
                else self.data(item)
                for key, item in value.items()
            }
        if isinstance(value, list | tuple):
            return [self.data(item) for item in value]
        return value
