"""A rule's glob, matched inside one word: `*`, `?` and `[…]` never stand for what could run.

In an allow rule a wildcard matches characters of one argument only, and never a character that
another command language reads as structure: blanks and newlines (a second argument to whatever
re-splits the word), `;` `&` `|` (tmux and shells end a command there), quotes, `$` and
backquotes, redirections, parentheses and braces, glob characters, `\\`, `#`, `!`. So
`tmux new-session -d -s *` covers `-s scout` but not `-s 'x;'`, and `sh -c *` never covers a
script, and a wildcard never matches a `..` folder (`rm /tmp/scout-*` never covers
`/tmp/scout-../../etc`). Characters written literally in the pattern match themselves.
"""

from __future__ import annotations

import re
from functools import lru_cache

# What a wildcard never matches: blanks, control characters and command-language structure.
STRUCTURE = " \t\n\r\x0b\x0c\x00;&|`$<>(){}'\"\\*?[]!#~"
_NOT_STRUCTURE = "[^" + re.escape(STRUCTURE) + "\\x01-\\x1f\\x7f]"


TRAVERSAL = re.compile(r"(?:^|/)\.\.(?:/|$)")


def matches(pattern: str, word: str) -> bool:
    """`word` fits the pattern word, and a wildcard never walks out of a folder with `..`."""
    if not has_wildcard(pattern):
        return word == re.sub(r"\[(.)\]", r"\1", pattern)
    if TRAVERSAL.search(word) and not TRAVERSAL.search(pattern):
        return False
    return word_glob(pattern).fullmatch(word) is not None


@lru_cache(maxsize=512)
def word_glob(pattern: str) -> re.Pattern[str]:
    """The regex for one pattern word (fnmatch syntax, wildcards kept inside the word)."""
    out: list[str] = []
    i = 0
    while i < len(pattern):
        char = pattern[i]
        if char == "*":
            out.append(f"{_NOT_STRUCTURE}*")
        elif char == "?":
            out.append(_NOT_STRUCTURE)
        elif char == "[" and (end := _class_end(pattern, i)) > 0:
            out.append(_char_class(pattern[i + 1 : end]))
            i = end
        else:
            out.append(re.escape(char))
        i += 1
    return re.compile("".join(out), re.S)


def has_wildcard(pattern: str) -> bool:
    """Whether a pattern word can match more than one word (`[*]` is a literal `*`)."""
    i = 0
    while i < len(pattern):
        if pattern[i] in "*?":
            return True
        if pattern[i] == "[" and (end := _class_end(pattern, i)) > 0:
            body = pattern[i + 1 : end]
            if body.startswith(("!", "^")) or len(body) != 1:
                return True
            i = end
        i += 1
    return False


def _class_end(pattern: str, start: int) -> int:
    """The index of the `]` closing the class opened at `start`, or -1 (then `[` is literal)."""
    i = start + 1
    if i < len(pattern) and pattern[i] in "!^":
        i += 1
    if i < len(pattern) and pattern[i] == "]":
        i += 1
    end = pattern.find("]", i)
    return end


def _char_class(body: str) -> str:
    negated = body[:1] in ("!", "^")
    if negated:
        body = body[1:]
    members = "".join(char if char == "-" else re.escape(char) for char in body)
    if negated:  # a negated class still never matches structure
        return f"[^{members}{re.escape(STRUCTURE)}\\x01-\\x1f\\x7f]"
    return f"[{members}]"
