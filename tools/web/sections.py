"""Picking one section out of a long Markdown page, so the model reads only what it asked for.

Page text is hostile input: everything here runs in time linear in the page (string methods, and
one regex whose runs stop at the next bracket), never a pattern that can backtrack across a line.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

# `[text](url)` → text. Neither run may cross a bracket or parenthesis, so each character is
# scanned a bounded number of times whatever the page holds.
_LINK = re.compile(r"\[([^\[\]]*)\]\([^()]*\)")
_FENCES = ("```", "~~~")


@dataclass(frozen=True)
class Heading:
    level: int
    text: str
    line: int


def atx_heading(line: str) -> tuple[int, str] | None:
    """(level, text) of an ATX heading line (`## Install ##` → (2, "Install")), else None.

    A heading is 1–6 `#` then whitespace; a closing run of `#` counts only after whitespace
    (`# C#` keeps its `#`).
    """
    level = len(line) - len(line.lstrip("#"))
    rest = line[level:]
    if not 1 <= level <= 6 or not rest[:1].isspace():
        return None
    text = rest.strip()
    unclosed = text.rstrip("#")
    if not unclosed or unclosed[-1].isspace():
        text = unclosed.rstrip()
    return level, text


def headings(markdown: str) -> list[Heading]:
    """ATX headings outside fenced code (a `# comment` in a shell block is not a heading)."""
    found: list[Heading] = []
    fenced = False
    for number, line in enumerate(markdown.splitlines()):
        if line.lstrip().startswith(_FENCES):
            fenced = not fenced
            continue
        heading = None if fenced else atx_heading(line)
        if heading is not None:
            text = _LINK.sub(r"\1", heading[1]).replace("*", "").replace("`", "").strip()
            found.append(Heading(heading[0], text, number))
    return found


def find_heading(found: list[Heading], select: str) -> Heading | None:
    """Exact heading text first (any case), then a heading containing it, then one containing
    all of its words (`serve model` finds "Step 3. Serve the model")."""
    wanted = select.strip().casefold()
    words = wanted.split()
    for accept in (
        lambda text: text == wanted,
        lambda text: wanted in text,
        lambda text: bool(words) and all(word in text for word in words),
    ):
        match = next((h for h in found if accept(h.text.casefold())), None)
        if match:
            return match
    return None


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
