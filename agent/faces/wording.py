"""Counted nouns as people write them: `1 model turn`, `14 model turns`."""

from __future__ import annotations


def plural(count: int, word: str, words: str | None = None) -> str:
    """`1 model turn`, `14 model turns`; `words` for an irregular plural."""
    return f"{count} {word if count == 1 else (words or word + 's')}"
