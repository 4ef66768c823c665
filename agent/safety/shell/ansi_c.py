r"""`$'…'` strings decoded as bash decodes them, so an escaped word is judged as the word it is.

`$'\x2d\x72f'` is `-rf` and `$'\u0072m'` is `rm`: bash reads C escapes (`\n`, `\e`), hex
(`\xHH`), octal (`\nnn`), Unicode (`\uHHHH`, `\UHHHHHHHH`) and control characters (`\cX`), and
the string ends at a NUL. An escape it does not know stays as written, backslash included.
"""

from __future__ import annotations

import re

from agent.safety.shell.shell_words import ShellSyntaxError

SIMPLE = {
    "n": "\n", "t": "\t", "r": "\r", "a": "\a", "b": "\b", "f": "\f", "v": "\v", "e": "\x1b",
    "E": "\x1b", "\\": "\\", "'": "'", '"': '"', "?": "?",
}  # fmt: skip
DIGITS = {"x": re.compile(r"[0-9a-fA-F]{1,2}"), "u": re.compile(r"[0-9a-fA-F]{1,4}"),
          "U": re.compile(r"[0-9a-fA-F]{1,8}")}  # fmt: skip
OCTAL = re.compile(r"[0-7]{1,3}")


def decode_ansi_c(src: str, pos: int) -> tuple[str, int]:
    """Decode from `pos` (just after `$'`) to the closing quote; return the text and the index
    after that quote."""
    out: list[str] = []
    while True:
        if pos >= len(src):
            raise ShellSyntaxError("unbalanced $'…' quote")
        char = src[pos]
        if char == "'":
            return "".join(out).split("\x00", 1)[0], pos + 1  # bash ends the string at a NUL
        if char != "\\":
            out.append(char)
            pos += 1
            continue
        esc = src[pos + 1 : pos + 2]
        if esc in SIMPLE:
            out.append(SIMPLE[esc])
            pos += 2
        elif esc in DIGITS and (digits := DIGITS[esc].match(src, pos + 2)):
            out.append(_code_point(int(digits.group(), 16)))
            pos = digits.end()
        elif esc == "c" and pos + 2 < len(src):
            out.append(chr(ord(src[pos + 2]) & 0x1F))
            pos += 3
        elif octal := OCTAL.match(src, pos + 1):
            out.append(chr(int(octal.group(), 8) & 0xFF))
            pos = octal.end()
        else:
            out.append("\\" + esc)
            pos += 2


def _code_point(value: int) -> str:
    """The character `value` names, or U+FFFD where it names none (as bash prints then)."""
    return chr(value) if value <= 0x10FFFF and not 0xD800 <= value <= 0xDFFF else "\ufffd"
