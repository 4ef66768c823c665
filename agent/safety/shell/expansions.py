"""Parameter and arithmetic expansions, judged as bash evaluates them, not as they look.

bash evaluates a variable's value as arithmetic in `$((…))`, in an indexed array's subscript
(`${a[i]}`), in `${x:offset}` and in `[[ x -eq y ]]`; arithmetic reads names recursively, and a
value like `a[$(cmd)]` runs `cmd`. `${!x}` expands the variable named by another's value (which
may itself be a subscript), and `${x@P}` expands a value as a prompt, which runs `$(…)` in it.
So an expansion is read-only only in an allow-listed form: a name (or a special parameter) with
a literal subscript, and the plain operators (defaults, patterns, case, length, `@Q`-style
quoting); anything else is named in the reason.
"""

from __future__ import annotations

import re

from agent.safety.shell.environment import shell_variable_reason

NAME = r"(?:[A-Za-z_][A-Za-z0-9_]*|[0-9]+|[@*#?$!-])"
SUBSCRIPT = r"(?:\[(?P<sub>[^\]]*)\])?"
HEAD_RE = re.compile(rf"^(?P<length>#)?(?P<name>{NAME}){SUBSCRIPT}")
INDIRECT_LIST_RE = re.compile(r"^![A-Za-z_][A-Za-z0-9_]*(?:[*@]|\[[@*]\])$")
LITERAL_INDEX_RE = re.compile(r"^\s*-?[0-9]+\s*$|^[@*]$")
OFFSET_RE = re.compile(r"^:\s*-?[0-9]+(?::\s*-?[0-9]+)?$")
ARITHMETIC_LITERAL_RE = re.compile(r"^[0-9\s+\-*/%()<>=!&|^~?:,]*$")
SAFE_TRANSFORMS = frozenset("QUuLEaK")
WORD_OPERATORS = (":-", ":=", ":?", ":+", "-", "=", "?", "+", "##", "#", "%%", "%", "//", "/#",
                  "/%", "/", "^^", "^", ",,", ",")  # fmt: skip


def subscript_problem(name: str) -> str | None:
    """`a[i]` as a variable name (`read`, `declare`, `unset`): its subscript is arithmetic."""
    if "[" not in name:
        return None
    subscript = name.split("[", 1)[1].rstrip("]")
    if LITERAL_INDEX_RE.match(subscript):
        return None
    return f"the array subscript in {name} is evaluated as arithmetic, which can run commands"


def expansion_problem(text: str) -> str | None:
    """Why the expansion `text` (`${…}` or `$((…))`, as written) is not read-only, or None."""
    if text.startswith("$(("):
        body = text[3:-2]
        if ARITHMETIC_LITERAL_RE.match(body):
            return None
        return f"arithmetic {text} evaluates variables' values, which can run commands"
    return _braced(text[2:-1], text)


def _braced(body: str, shown: str) -> str | None:
    if INDIRECT_LIST_RE.match(body):
        return None
    if body.startswith("!"):
        return f"{shown} expands a variable named by another's value (indirection)"
    head = HEAD_RE.match(body)
    if head is None:
        return f"{shown} is not an expansion form known to be harmless"
    sub = head.group("sub")
    if sub is not None and not LITERAL_INDEX_RE.match(sub):
        return f"the array subscript in {shown} is evaluated as arithmetic, which can run commands"
    rest = body[head.end() :]
    if not rest:
        return None
    if head.group("length"):
        return f"{shown} is not an expansion form known to be harmless"
    if rest.startswith("@"):
        if len(rest) == 2 and rest[1] in SAFE_TRANSFORMS:
            return None
        return f"{shown} applies the transformation {rest}, which is not known to be harmless"
    if rest.startswith(":") and not rest.startswith((":-", ":=", ":?", ":+")):
        if OFFSET_RE.match(rest):
            return None
        return f"the offset in {shown} is evaluated as arithmetic, which can run commands"
    operator = next((op for op in WORD_OPERATORS if rest.startswith(op)), None)
    if operator is None:
        return f"{shown} is not an expansion form known to be harmless"
    if operator in (":=", "=") and (reason := shell_variable_reason(head.group("name"))):
        return f"{shown} assigns: {reason}"
    return None
