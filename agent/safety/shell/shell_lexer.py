"""The shell reader's lexer: source text to words, operators and newlines, here-documents read.

Quotes are removed the way the shell removes them; expansions (`$VAR`, `$(…)`, backticks, `<(…)`)
are kept as written and flagged, and the source of every command substitution is kept so it can
be judged too. Unquoted globs that could expand to an option (`*`, `?`, `[` first) and brace
expansions are flagged as patterns.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from agent.safety.shell.ansi_c import decode_ansi_c
from agent.safety.shell.brace_expansion import TooManyWords, expand_braces, has_brace
from agent.safety.shell.shell_words import ShellSyntaxError, Word

OPERATORS = (
    "&>>", "<<<", "<<-", "&&", "||", ";;", "|&", "&>", ">>", ">|", ">&", "<&", "<<", "<>",
    ";", "&", "|", "(", ")", "<", ">",
)  # fmt: skip
WORD_BREAK = frozenset(" \t\n|&;()<>")
NAME_RE = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
ASSIGNMENT_RE = re.compile(r"([A-Za-z_][A-Za-z0-9_]*)\+?=")
QUOTED_MARK = "\x00"
SPECIAL_PARAMS = frozenset("@*#?$!-0123456789")


@dataclass
class HereDoc:
    delimiter: Word
    strip_tabs: bool
    body: str | None = None
    substitutions: tuple[str, ...] = ()
    expansions: tuple[str, ...] = ()


@dataclass(frozen=True)
class Token:
    kind: str  # "word", "op", "newline", "fd"
    word: Word | None = None
    op: str = ""
    heredoc: HereDoc | None = None


@dataclass
class _WordBuilder:
    parts: list[str] = field(default_factory=list)
    bare: list[str] = field(default_factory=list)
    dynamic: bool = False
    quoted: bool = False
    substitutions: list[str] = field(default_factory=list)
    expansions: list[str] = field(default_factory=list)
    segments: list[tuple[str, bool]] = field(default_factory=list)  # (text, was it quoted)

    def literal(self, text: str, *, quoted: bool) -> None:
        self.parts.append(text)
        self.segments.append((text, quoted))

    def build(self, raw: str) -> Word:
        match = ASSIGNMENT_RE.match(raw)
        bare = "".join(self.bare)
        leading_glob = bare[:1] in ("*", "?") or (bare[:1] == "[" and "]" in bare[1:])
        pattern = leading_glob
        braced: tuple[str, ...] = ()
        chars = self._chars() if match is None else []
        if chars and has_brace(chars):
            globbing = any(c in "*?[" and not q for c, q in chars)
            try:
                words = () if self.dynamic or globbing else expand_braces(chars)
            except TooManyWords:
                words = ()
            braced = tuple(w for w in words if w)
            pattern = pattern or not braced
        return Word(
            text="".join(self.parts),
            dynamic=self.dynamic,
            quoted=self.quoted,
            substitutions=tuple(self.substitutions),
            expansions=tuple(self.expansions),
            assignment=match.group(1) if match else None,
            pattern=pattern,
            braced=braced,
        )

    def _chars(self) -> list[tuple[str, bool]]:
        """Each character with whether it was quoted; empty when no unquoted `{` is there."""
        if not any(not quoted and "{" in text for text, quoted in self.segments):
            return []
        return [(char, quoted) for text, quoted in self.segments for char in text]


class Lexer:
    """Turns source text into words, operators and newlines, reading here-document bodies."""

    def __init__(self, source: str) -> None:
        self.src = source
        self.pos = 0
        self.pending: list[HereDoc] = []

    def tokens(self) -> list[Token]:
        out: list[Token] = []
        src = self.src
        while self.pos < len(src):
            char = src[self.pos]
            if char in " \t":
                self.pos += 1
            elif src.startswith("\\\n", self.pos):
                self.pos += 2
            elif char == "\n":
                self.pos += 1
                out.append(Token("newline"))
                self._read_heredoc_bodies()
            elif char == "#":
                end = src.find("\n", self.pos)
                self.pos = len(src) if end < 0 else end
            elif src.startswith(("<(", ">("), self.pos):
                out.append(Token("word", word=self._read_word()))
            elif op := next((o for o in OPERATORS if src.startswith(o, self.pos)), None):
                self.pos += len(op)
                out.append(self._operator(op))
            else:
                start = self.pos
                word = self._read_word()
                is_fd = (
                    word.text.isdigit() and not word.quoted and src.startswith(("<", ">"), self.pos)
                )
                if word.braced:
                    out.extend(Token("word", word=Word(w, quoted=True)) for w in word.braced)
                else:
                    out.append(Token("fd", word=word) if is_fd else Token("word", word=word))
                if self.pos == start:
                    raise ShellSyntaxError(f"unexpected character {char!r}")
        if self.pending:
            self._read_heredoc_bodies()
        return out

    def _operator(self, op: str) -> Token:
        if op not in ("<<", "<<-"):
            return Token("op", op=op)
        while self.pos < len(self.src) and self.src[self.pos] in " \t":
            self.pos += 1
        if self.pos >= len(self.src) or self.src[self.pos] in WORD_BREAK:
            raise ShellSyntaxError(f"'{op}' needs a here-document delimiter")
        heredoc = HereDoc(delimiter=self._read_word(), strip_tabs=op == "<<-")
        self.pending.append(heredoc)
        return Token("op", op=op, heredoc=heredoc)

    def _read_heredoc_bodies(self) -> None:
        for heredoc in self.pending:
            lines: list[str] = []
            while self.pos < len(self.src):
                end = self.src.find("\n", self.pos)
                end = len(self.src) if end < 0 else end
                line = self.src[self.pos : end]
                self.pos = end + 1
                if (line.lstrip("\t") if heredoc.strip_tabs else line) == heredoc.delimiter.text:
                    break
                lines.append(line.lstrip("\t") if heredoc.strip_tabs else line)
            heredoc.body = "\n".join(lines) + ("\n" if lines else "")
            if not heredoc.delimiter.quoted:
                found = scan_expansions(heredoc.body)
                heredoc.substitutions = tuple(found.substitutions)
                heredoc.expansions = tuple(found.expansions)
        self.pending = []

    def _read_word(self) -> Word:
        start = self.pos
        builder = _WordBuilder()
        src = self.src
        while self.pos < len(src):
            char = src[self.pos]
            if src.startswith(("<(", ">("), self.pos):
                self.pos += 1
                body = self._read_balanced()
                builder.parts.append(f"{char}({body})")
                builder.segments.append((QUOTED_MARK, True))
                builder.bare.append(QUOTED_MARK)
                builder.dynamic = True
                builder.substitutions.append(body)
            elif char in WORD_BREAK:
                break
            elif char == "\\":
                self._read_backslash(builder)
            elif char == "'":
                end = src.find("'", self.pos + 1)
                if end < 0:
                    raise ShellSyntaxError("unbalanced single quote")
                builder.literal(src[self.pos + 1 : end], quoted=True)
                builder.bare.append(QUOTED_MARK)
                builder.quoted = True
                self.pos = end + 1
            elif char == '"':
                self.pos += 1
                self._read_double_quoted(builder)
                builder.bare.append(QUOTED_MARK)
                builder.quoted = True
            elif char == "$":
                self._read_dollar(builder, in_double=False)
                builder.bare.append(QUOTED_MARK)
            elif char == "`":
                self._read_backtick(builder)
                builder.bare.append(QUOTED_MARK)
            else:
                builder.literal(char, quoted=False)
                builder.bare.append(char)
                self.pos += 1
        return builder.build(src[start : self.pos])

    def _read_backslash(self, builder: _WordBuilder) -> None:
        nxt = self.src[self.pos + 1 : self.pos + 2]
        self.pos += 2
        if nxt != "\n":
            builder.literal(nxt, quoted=True)
            builder.bare.append(QUOTED_MARK)
            builder.quoted = True

    def _read_double_quoted(self, builder: _WordBuilder) -> None:
        src = self.src
        while True:
            if self.pos >= len(src):
                raise ShellSyntaxError("unbalanced double quote")
            char = src[self.pos]
            if char == '"':
                self.pos += 1
                return
            if char == "\\" and src[self.pos + 1 : self.pos + 2] in ('"', "\\", "$", "`", "\n"):
                if src[self.pos + 1] != "\n":
                    builder.literal(src[self.pos + 1], quoted=True)
                self.pos += 2
            elif char == "$":
                self._read_dollar(builder, in_double=True)
            elif char == "`":
                self._read_backtick(builder)
            else:
                builder.literal(char, quoted=True)
                self.pos += 1

    def _read_dollar(self, builder: _WordBuilder, *, in_double: bool) -> None:
        src = self.src
        nxt = src[self.pos + 1 : self.pos + 2]
        if nxt == "'" and not in_double:
            self.pos += 2
            builder.literal(self._read_ansi_c(), quoted=True)
            builder.quoted = True
            return
        if nxt == '"' and not in_double:
            self.pos += 2
            self._read_double_quoted(builder)
            builder.quoted = True
            return
        start = self.pos
        if nxt == "(":
            self.pos += 1
            body = self._read_balanced()
            if body.startswith("(") and body.endswith(")"):
                builder.expansions.append(f"$({body})")
                _merge(builder, scan_expansions(body[1:-1]))
            else:
                builder.substitutions.append(body)
        elif nxt == "[":  # `$[…]`: bash's old spelling of `$((…))`
            self.pos += 1
            body = self._read_enclosed("[", "]", "unbalanced bracket in $[…]")
            builder.expansions.append(f"$(({body}))")
            _merge(builder, scan_expansions(body))
        elif nxt == "{":
            self.pos += 1
            body = self._read_braced()
            builder.expansions.append(f"${{{body}}}")
            _merge(builder, scan_expansions(body))
        elif nxt and nxt in SPECIAL_PARAMS:
            self.pos += 2
        elif match := NAME_RE.match(src, self.pos + 1):
            self.pos = match.end()
        else:
            builder.literal("$", quoted=in_double)
            self.pos += 1
            return
        builder.parts.append(src[start : self.pos])
        builder.segments.append((QUOTED_MARK, True))
        builder.dynamic = True

    def _read_ansi_c(self) -> str:
        text, self.pos = decode_ansi_c(self.src, self.pos)
        return text

    def _read_backtick(self, builder: _WordBuilder) -> None:
        src = self.src
        body: list[str] = []
        self.pos += 1
        while True:
            if self.pos >= len(src):
                raise ShellSyntaxError("unbalanced backtick")
            char = src[self.pos]
            if char == "`":
                self.pos += 1
                break
            if char == "\\" and src[self.pos + 1 : self.pos + 2] in ("`", "\\", "$"):
                body.append(src[self.pos + 1])
                self.pos += 2
            else:
                body.append(char)
                self.pos += 1
        text = "".join(body)
        builder.parts.append(f"`{text}`")
        builder.segments.append((QUOTED_MARK, True))
        builder.dynamic = True
        builder.substitutions.append(text)

    def _read_balanced(self) -> str:
        """From an opening `(`, return the text up to its matching `)` (quotes respected)."""
        return self._read_enclosed("(", ")", "unbalanced parenthesis in $(…) or <(…)")

    def _read_braced(self) -> str:
        return self._read_enclosed("{", "}", "unbalanced brace in ${…}")

    def _read_enclosed(self, opening: str, closing: str, problem: str) -> str:
        src = self.src
        start = self.pos + 1
        depth = 0
        while self.pos < len(src):
            char = src[self.pos]
            if char == "\\":
                self.pos += 2
                continue
            if char == "'" and opening == "(":
                end = src.find("'", self.pos + 1)
                if end < 0:
                    raise ShellSyntaxError("unbalanced single quote")
                self.pos = end + 1
                continue
            if char == '"':
                self.pos += 1
                self._read_double_quoted(_WordBuilder())
                continue
            if char == "`":
                self._read_backtick(_WordBuilder())
                continue
            if char == opening:
                depth += 1
            elif char == closing:
                depth -= 1
                if depth == 0:
                    self.pos += 1
                    return src[start : self.pos - 1]
            self.pos += 1
        raise ShellSyntaxError(problem)


def _merge(builder: _WordBuilder, found: _WordBuilder) -> None:
    builder.substitutions.extend(found.substitutions)
    builder.expansions.extend(found.expansions)


def find_substitutions(text: str) -> list[str]:
    """Commands that `$(…)` and backticks inside expanded text (here-docs, `${…}`) would run."""
    return scan_expansions(text).substitutions


def scan_expansions(text: str) -> _WordBuilder:
    """The commands (`$(…)`, backticks) and expansions (`${…}`, `$((…))`) inside expanded text."""
    lexer = Lexer(text)
    builder = _WordBuilder()
    while lexer.pos < len(text):
        char = text[lexer.pos]
        if char == "\\":
            lexer.pos += 2
        elif char == "$":
            lexer._read_dollar(builder, in_double=True)
        elif char == "`":
            lexer._read_backtick(builder)
        else:
            lexer.pos += 1
    return builder
