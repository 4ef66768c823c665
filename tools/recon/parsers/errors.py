"""The one error a parser raises: the text is clearly not the output it was built to read."""

from __future__ import annotations

EXCERPT_CHARS = 120
DEFAULT_HINT = "Check that the command ran as intended and printed its usual output."


def excerpt(text: str, limit: int = EXCERPT_CHARS) -> str:
    """A short, single-line quote of the input, so the message shows what was actually read."""
    flat = " ".join(text.split())
    if not flat:
        return "(empty output)"
    return repr(flat if len(flat) <= limit else flat[:limit] + "…")


class ParseError(ValueError):
    """Raised for input that is not the expected command output; the message quotes the input."""

    def __init__(self, expected: str, text: str, hint: str = DEFAULT_HINT) -> None:
        self.expected = expected
        self.excerpt = excerpt(text)
        super().__init__(f"Expected {expected}, got {self.excerpt}. {hint}")
