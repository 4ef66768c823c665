"""Brace expansion as bash does it, before any word is judged: `{'rm',-rf,/x}` is three words.

bash expands braces after quote reading but before anything else, and quoted members do not stop
it (only a quoted `{`, `,` or `}` does), so `{"cat",/etc/x}` runs `cat /etc/x`. The lexer keeps
each character with whether it was quoted; this expands the unquoted braces into the words bash
would make. Too many words, or a sequence it cannot read, and the caller keeps the word as a
pattern (only known at run time).
"""

from __future__ import annotations

import re

Chars = list[tuple[str, bool]]
MAX_WORDS = 64
SEQUENCE_RE = re.compile(r"^(-?\d+|[A-Za-z])\.\.(-?\d+|[A-Za-z])(?:\.\.(-?\d+))?$")


class TooManyWords(ValueError):
    """The expansion would make more words than the classifier follows."""


def has_brace(chars: Chars) -> bool:
    """Whether an unquoted `{` … `}` holding an unquoted `,` or `..` is in the word."""
    return _find(chars) is not None


def expand_braces(chars: Chars) -> list[str]:
    """The words bash makes from `chars` by brace expansion (one word when there is none)."""
    found = _find(chars)
    if found is None:
        return ["".join(c for c, _ in chars)]
    start, end, members = found
    words: list[str] = []
    for member in members:
        words.extend(expand_braces(chars[:start] + member + chars[end + 1 :]))
        if len(words) > MAX_WORDS:
            raise TooManyWords(f"more than {MAX_WORDS} words")
    return words


def _find(chars: Chars) -> tuple[int, int, list[Chars]] | None:
    for start, (char, quoted) in enumerate(chars):
        if char != "{" or quoted:
            continue
        end = _closing(chars, start)
        if end is None:
            continue
        inner = chars[start + 1 : end]
        members = _split(inner)
        if len(members) > 1:
            return start, end, members
        sequence = _sequence(inner)
        if sequence is not None:
            return start, end, [[(c, True) for c in item] for item in sequence]
    return None


def _closing(chars: Chars, start: int) -> int | None:
    depth = 0
    for index in range(start, len(chars)):
        char, quoted = chars[index]
        if quoted:
            continue
        if char == "{":
            depth += 1
        elif char == "}":
            depth -= 1
            if depth == 0:
                return index
    return None


def _split(inner: Chars) -> list[Chars]:
    members: list[Chars] = [[]]
    depth = 0
    for char, quoted in inner:
        if not quoted and char == "{":
            depth += 1
        elif not quoted and char == "}":
            depth -= 1
        if not quoted and char == "," and depth == 0:
            members.append([])
            continue
        members[-1].append((char, quoted))
    return members


def _sequence(inner: Chars) -> list[str] | None:
    if any(quoted for _, quoted in inner):
        return None
    match = SEQUENCE_RE.match("".join(c for c, _ in inner))
    if match is None:
        return None
    first, last, step_text = match.groups()
    step = abs(int(step_text or 1)) or 1
    if first.lstrip("-").isdigit() != last.lstrip("-").isdigit():
        return None
    numeric = first.lstrip("-").isdigit()
    low, high = (int(first), int(last)) if numeric else (ord(first), ord(last))
    count = abs(high - low) // step + 1
    if count > MAX_WORDS:
        raise TooManyWords(f"more than {MAX_WORDS} words")
    values = range(low, high + (1 if high >= low else -1), step if high >= low else -step)
    return [str(v) if numeric else chr(v) for v in values]
