"""Reading a YAML file so that a syntax error reads as one sentence: line, column, what is wrong.

PyYAML's own message cites `"<unicode string>"` and draws a caret under a copy of the line; the
callers (inventory, settings) put the file's name in front of what this returns.

The text is UTF-8, or UTF-16/32 with a byte order mark (the encodings YAML 1.2 names; Windows
PowerShell writes UTF-16 with a mark). Anything else (Latin-1, a stray 0xff) is a syntax error
that names the first byte that is not UTF-8 and says to save the file as UTF-8.
"""

from __future__ import annotations

import codecs
from pathlib import Path
from typing import Any

import yaml


class YAMLSyntaxError(ValueError):
    """The text is not valid YAML; `str()` is `line L, column C: what the parser expected`."""


_MARKED = (  # longest mark first: UTF-32's little-endian mark begins like UTF-16's
    (codecs.BOM_UTF32_LE, "utf-32"),
    (codecs.BOM_UTF32_BE, "utf-32"),
    (codecs.BOM_UTF8, "utf-8-sig"),
    (codecs.BOM_UTF16_LE, "utf-16"),
    (codecs.BOM_UTF16_BE, "utf-16"),
)


def read_yaml(path: Path) -> Any:
    """The parsed file; OSError as raised by reading it, YAMLSyntaxError for bad syntax."""
    text = decode_text(path.read_bytes())
    try:
        return yaml.safe_load(text)
    except yaml.YAMLError as exc:
        raise YAMLSyntaxError(describe_yaml_error(exc)) from None


def decode_text(data: bytes) -> str:
    """The file's text; YAMLSyntaxError naming where the first byte that is not text sits."""
    encoding = next((name for mark, name in _MARKED if data.startswith(mark)), "utf-8")
    try:
        text = data.decode(encoding)
    except UnicodeDecodeError as exc:
        shown = encoding.removesuffix("-sig").upper()
        what = f"byte 0x{data[exc.start]:02x} is not {shown} text; save the file as UTF-8"
        raise YAMLSyntaxError(f"{_where(data, exc.start)}: {what}") from None
    if "\0" in text:  # never YAML: UTF-16 without its byte order mark, or a binary file
        where = _where(text.encode(), text.encode().index(b"\0"))
        raise YAMLSyntaxError(f"{where}: a NUL byte is not text; save the file as UTF-8")
    return text


def _where(data: bytes, offset: int) -> str:
    line = data.count(b"\n", 0, offset) + 1
    column = offset - (data.rfind(b"\n", 0, offset) + 1) + 1
    return f"line {line}, column {column}"


def describe_yaml_error(exc: yaml.YAMLError) -> str:
    mark = getattr(exc, "problem_mark", None)
    problem = getattr(exc, "problem", None) or str(exc).splitlines()[0]
    where = f"line {mark.line + 1}, column {mark.column + 1}: " if mark is not None else ""
    context = getattr(exc, "context", None)
    context_mark = getattr(exc, "context_mark", None)
    if context and context_mark is not None:
        problem += f" ({context} that starts on line {context_mark.line + 1})"
    elif context:
        problem += f" ({context})"
    return where + problem
