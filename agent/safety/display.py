"""What the operator sees is what runs: control characters shown as escapes, never interpreted.

An approval panel or webhook payload that passed `ESC[8m` (hidden text), a carriage return, a
backspace or a right-to-left override through to a terminal could show one command while
another runs. Each such character is written as its escape (`\\x1b`, `\\r`, `\\u202e`);
newlines and tabs stay, since multi-line commands must still read as lines.
"""

from __future__ import annotations

import re
from typing import Any

_INVISIBLE = re.compile(
    "[\x00-\x08\x0b-\x1f\x7f-\x9f\u00ad\u061c\u180e\u200b-\u200f\u2028-\u202e\u2060-\u2069"
    "\ufeff\ufff9-\ufffb]"
)
_NAMED = {"\r": "\\r", "\x08": "\\b", "\x0b": "\\v", "\x0c": "\\f", "\x00": "\\0"}


def _escape(match: re.Match[str]) -> str:
    char = match.group()
    if char in _NAMED:
        return _NAMED[char]
    code = ord(char)
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def visible(text: str) -> str:
    return _INVISIBLE.sub(_escape, text)


def visible_data(value: Any) -> Any:
    """`visible` applied to every string (keys too) of JSON-like data."""
    if isinstance(value, str):
        return visible(value)
    if isinstance(value, dict):
        return {visible(str(k)): visible_data(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [visible_data(item) for item in value]
    return value
