"""Picking one section out of a long Markdown page, so the model reads only what it asked for."""

from __future__ import annotations

import re
from dataclasses import dataclass

_HEADING = re.compile(r"^(#{1,6})\s+(.*?)\s*#*\s*$")
_FENCE = re.compile(r"^\s*(```|~~~)")
_LINK = re.compile(r"\[([^\]]*)\]\([^)]*\)")


@dataclass(frozen=True)
class Heading:
    level: int
    text: str
    line: int


def headings(markdown: str) -> list[Heading]:
    """ATX headings outside fenced code (a `# comment` in a shell block is not a heading)."""
    found: list[Heading] = []
    fenced = False
    for number, line in enumerate(markdown.splitlines()):
        if _FENCE.match(line):
            fenced = not fenced
            continue
        match = None if fenced else _HEADING.match(line)
        if match:
            text = _LINK.sub(r"\1", match.group(2)).replace("*", "").replace("`", "").strip()
            found.append(Heading(len(match.group(1)), text, number))
    return found


def find_heading(found: list[Heading], select: str) -> Heading | None:
    """Exact heading text first (any case), then a heading containing it, then a regex search."""
    wanted = select.strip().casefold()
    for accept in (
        lambda h: h.text.casefold() == wanted,
        lambda h: wanted in h.text.casefold(),
    ):
        match = next((h for h in found if accept(h)), None)
        if match:
            return match
    try:
        pattern = re.compile(select, re.IGNORECASE)
    except re.error:
        return None
    return next((h for h in found if pattern.search(h.text)), None)


def select_section(markdown: str, select: str) -> tuple[Heading, str] | None:
    """The heading matching `select` and its section (up to the next heading of its rank or
    higher), or None when no heading matches."""
    found = headings(markdown)
    target = find_heading(found, select)
    if target is None:
        return None
    lines = markdown.splitlines()
    end = next(
        (h.line for h in found if h.line > target.line and h.level <= target.level), len(lines)
    )
    return target, "\n".join(lines[target.line : end]).strip("\n")
