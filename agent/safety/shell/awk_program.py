"""Reads an awk program with awk's own lexical grammar and allows only what only reads and prints.

A regex over the text is not a parse: `system (…)` with a tab, `"id" |getline`, `print >"f"`
after a string holding `;` all slip past one. This tokenizer reads strings, regex literals (where
awk's grammar allows one: not after an operand), comments and operators as awk does, then
refuses every token that acts outside the program: `system`, pipes and coprocesses (`|`, `|&`),
a `>`/`>>` that redirects `print`/`printf` (outside parentheses), `@` (gawk's `@load`,
`@include` and indirect calls) and gawk's network files (`/inet/…`). Anything it cannot read is
refused too.
"""

from __future__ import annotations

import re

TOKEN_RE = re.compile(
    r"""(?P<space>[ \t\r]+|\\\n)|(?P<newline>\n)|(?P<comment>\#[^\n]*)
    |(?P<number>(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?|0[xX][0-9a-fA-F]+)
    |(?P<name>[A-Za-z_][A-Za-z0-9_]*(?:::[A-Za-z_][A-Za-z0-9_]*)?)
    |(?P<op>\|\||&&|\|&|\||>>|>=|<=|==|!=|!~|\+\+|--|\+=|-=|\*=|/=|%=|\^=|\*\*=|\*\*
        |[{}()\[\];,:?!~<>=+\-*/%^$])
    """,
    re.VERBOSE,
)
OPERAND_END = frozenset({")", "]", "$", "++", "--"})
NEVER = {
    "system": "runs a shell command (system)",
    "|": "runs a command through a pipe",
    "|&": "talks to a coprocess",
    "@": "loads code or calls a function by name (@)",
}


def awk_problem(program: str) -> str | None:
    """Why `program` is not read-only, or None when every token only reads and prints."""
    try:
        tokens = list(_tokens(program))
    except ValueError as error:
        return f"could not be read ({error})"
    depth, print_depth = 0, None
    previous = ""
    for kind, text in tokens:
        if text in NEVER and kind in ("name", "op"):
            return NEVER[text]
        if kind == "string" and text.startswith("/inet"):
            return f"opens a network connection ({text})"
        operator = text if kind in ("op", "newline") else ""
        if kind == "name" and text in ("print", "printf"):
            print_depth = depth
        elif operator in ("(", "["):
            depth += 1
        elif operator in (")", "]"):
            depth -= 1
        elif operator in (">", ">>") and print_depth is not None and depth <= print_depth:
            return "writes to a file (print >)"
        elif operator in (";", "}") or (kind == "newline" and previous not in (",", "&&", "||")):
            print_depth = None if print_depth is None or depth <= print_depth else print_depth
        if kind != "newline":
            previous = operator or kind
    return None


def _tokens(program: str):  # type: ignore[no-untyped-def]
    """(kind, text) pairs: strings and regexes as whole tokens, spaces and comments dropped."""
    index, previous = 0, ""
    while index < len(program):
        char = program[index]
        if char == '"':
            end = _closing(program, index, '"')
            yield "string", program[index + 1 : end]
            index, previous = end + 1, "string"
            continue
        if char == "/" and not _after_operand(previous):
            end = _closing(program, index, "/")
            yield "regex", program[index + 1 : end]
            index, previous = end + 1, "regex"
            continue
        if char == "@":
            yield "op", "@"
            index += 1
            continue
        match = TOKEN_RE.match(program, index)
        if match is None:
            raise ValueError(f"unexpected {char!r}")
        index = match.end()
        kind = match.lastgroup or ""
        if kind in ("space", "comment"):
            continue
        text = match.group()
        yield kind, text
        previous = "operand" if kind in ("number", "name") else text


def _after_operand(previous: str) -> bool:
    """A `/` after an operand divides; anywhere else it opens a regex literal."""
    return previous in ("operand", "string", "regex") or previous in OPERAND_END


def _closing(program: str, start: int, quote: str) -> int:
    index = start + 1
    while index < len(program):
        char = program[index]
        if char == "\\":
            index += 2
            continue
        if char == quote:
            return index
        if char == "\n":
            break
        index += 1
    raise ValueError("a string or regex is not closed")
