"""A small shell reader: enough of the POSIX/bash grammar to find every command a string would run.

It never executes anything and does not try to be a whole shell. Anything it does not understand
raises `ShellSyntaxError`; the classifier then treats the command as mutating. Quotes are removed
the way the shell removes them, expansions (`$VAR`, `$(…)`, backticks, `<(…)`) are kept as written
and flagged, and the source of every command substitution is kept so it can be judged too.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

KEYWORDS_SKIPPED = frozenset(
    {"if", "then", "elif", "else", "fi", "while", "until", "do", "done", "!"}
)
KEYWORDS_OPENING = frozenset({"if", "while", "until"})
KEYWORDS_CLOSING = frozenset({"fi", "done"})
KEYWORDS_UNSUPPORTED = frozenset({"case", "esac", "function", "select", "coproc"})
OPERATORS = (
    "&>>", "<<<", "<<-", "&&", "||", ";;", "|&", "&>", ">>", ">|", ">&", "<&", "<<", "<>",
    ";", "&", "|", "(", ")", "<", ">",
)  # fmt: skip
REDIRECT_OPS = frozenset({"&>>", "<<<", "<<-", "&>", ">>", ">|", ">&", "<&", "<<", "<>", "<", ">"})
LIST_OPS = frozenset({";", "&", "&&", "||", "|", "|&"})
WORD_BREAK = frozenset(" \t\n|&;()<>")
NAME_RE = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
ASSIGNMENT_RE = re.compile(r"([A-Za-z_][A-Za-z0-9_]*)\+?=")
SPECIAL_PARAMS = frozenset("@*#?$!-0123456789")
ANSI_C_ESCAPES = {
    "n": "\n", "t": "\t", "r": "\r", "a": "\a", "b": "\b", "f": "\f", "v": "\v", "e": "\x1b",
    "E": "\x1b", "\\": "\\", "'": "'", '"': '"', "?": "?",
}  # fmt: skip


class ShellSyntaxError(ValueError):
    """The text is not shell this reader can follow (unbalanced quotes, unsupported syntax)."""


class RuntimeText(str):
    """A word whose value holds an expansion, so the shell only knows it when the line runs."""

    __slots__ = ()


@dataclass(frozen=True)
class Word:
    """One shell word after quote removal; `substitutions` are the commands it would run."""

    text: str
    dynamic: bool = False
    quoted: bool = False
    substitutions: tuple[str, ...] = ()
    assignment: str | None = None

    @property
    def value(self) -> str:
        return RuntimeText(self.text) if self.dynamic else self.text


@dataclass(frozen=True)
class Redirect:
    """`[fd]op target`; here-documents carry their body (and whether it is expanded)."""

    op: str
    target: Word
    fd: int | None = None
    body: str | None = None


@dataclass(frozen=True)
class Command:
    """One simple command: `NAME=value … word … redirects`, and where it sits."""

    assignments: tuple[Word, ...]
    words: tuple[Word, ...]
    redirects: tuple[Redirect, ...]
    piped_input: bool = False
    nested: bool = False

    @property
    def argv(self) -> list[str]:
        return [w.value for w in self.words]

    @property
    def substitutions(self) -> list[str]:
        found: list[str] = []
        for word in (*self.assignments, *self.words):
            found.extend(word.substitutions)
        for redirect in self.redirects:
            found.extend(redirect.target.substitutions)
        return found


@dataclass(frozen=True)
class Script:
    """Every simple command in the source, in order, flattened out of lists, pipes and groups."""

    commands: tuple[Command, ...]


@dataclass
class _HereDoc:
    delimiter: Word
    strip_tabs: bool
    body: str | None = None
    substitutions: tuple[str, ...] = ()


@dataclass(frozen=True)
class _Token:
    kind: str  # "word", "op", "newline", "fd"
    word: Word | None = None
    op: str = ""
    heredoc: _HereDoc | None = None


@dataclass
class _WordBuilder:
    parts: list[str] = field(default_factory=list)
    dynamic: bool = False
    quoted: bool = False
    substitutions: list[str] = field(default_factory=list)

    def build(self, raw: str) -> Word:
        match = ASSIGNMENT_RE.match(raw)
        return Word(
            text="".join(self.parts),
            dynamic=self.dynamic,
            quoted=self.quoted,
            substitutions=tuple(self.substitutions),
            assignment=match.group(1) if match else None,
        )


class _Lexer:
    """Turns source text into words, operators and newlines, reading here-document bodies."""

    def __init__(self, source: str) -> None:
        self.src = source
        self.pos = 0
        self.pending: list[_HereDoc] = []

    def tokens(self) -> list[_Token]:
        out: list[_Token] = []
        src = self.src
        while self.pos < len(src):
            char = src[self.pos]
            if char in " \t":
                self.pos += 1
            elif src.startswith("\\\n", self.pos):
                self.pos += 2
            elif char == "\n":
                self.pos += 1
                out.append(_Token("newline"))
                self._read_heredoc_bodies()
            elif char == "#":
                end = src.find("\n", self.pos)
                self.pos = len(src) if end < 0 else end
            elif src.startswith(("<(", ">("), self.pos):
                out.append(_Token("word", word=self._read_word()))
            elif op := next((o for o in OPERATORS if src.startswith(o, self.pos)), None):
                self.pos += len(op)
                out.append(self._operator(op))
            else:
                start = self.pos
                word = self._read_word()
                is_fd = (
                    word.text.isdigit() and not word.quoted and src.startswith(("<", ">"), self.pos)
                )
                out.append(_Token("fd", word=word) if is_fd else _Token("word", word=word))
                if self.pos == start:
                    raise ShellSyntaxError(f"unexpected character {char!r}")
        if self.pending:
            self._read_heredoc_bodies()
        return out

    def _operator(self, op: str) -> _Token:
        if op not in ("<<", "<<-"):
            return _Token("op", op=op)
        while self.pos < len(self.src) and self.src[self.pos] in " \t":
            self.pos += 1
        if self.pos >= len(self.src) or self.src[self.pos] in WORD_BREAK:
            raise ShellSyntaxError(f"'{op}' needs a here-document delimiter")
        heredoc = _HereDoc(delimiter=self._read_word(), strip_tabs=op == "<<-")
        self.pending.append(heredoc)
        return _Token("op", op=op, heredoc=heredoc)

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
                heredoc.substitutions = tuple(find_substitutions(heredoc.body))
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
                builder.parts.append(src[self.pos + 1 : end])
                builder.quoted = True
                self.pos = end + 1
            elif char == '"':
                self.pos += 1
                self._read_double_quoted(builder)
                builder.quoted = True
            elif char == "$":
                self._read_dollar(builder, in_double=False)
            elif char == "`":
                self._read_backtick(builder)
            else:
                builder.parts.append(char)
                self.pos += 1
        return builder.build(src[start : self.pos])

    def _read_backslash(self, builder: _WordBuilder) -> None:
        nxt = self.src[self.pos + 1 : self.pos + 2]
        self.pos += 2
        if nxt != "\n":
            builder.parts.append(nxt)
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
                    builder.parts.append(src[self.pos + 1])
                self.pos += 2
            elif char == "$":
                self._read_dollar(builder, in_double=True)
            elif char == "`":
                self._read_backtick(builder)
            else:
                builder.parts.append(char)
                self.pos += 1

    def _read_dollar(self, builder: _WordBuilder, *, in_double: bool) -> None:
        src = self.src
        nxt = src[self.pos + 1 : self.pos + 2]
        if nxt == "'" and not in_double:
            self.pos += 2
            builder.parts.append(self._read_ansi_c())
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
                builder.substitutions.extend(find_substitutions(body[1:-1]))
            else:
                builder.substitutions.append(body)
        elif nxt == "{":
            self.pos += 1
            body = self._read_braced()
            builder.substitutions.extend(find_substitutions(body))
        elif nxt and nxt in SPECIAL_PARAMS:
            self.pos += 2
        elif match := NAME_RE.match(src, self.pos + 1):
            self.pos = match.end()
        else:
            builder.parts.append("$")
            self.pos += 1
            return
        builder.parts.append(src[start : self.pos])
        builder.dynamic = True

    def _read_ansi_c(self) -> str:
        out: list[str] = []
        src = self.src
        while True:
            if self.pos >= len(src):
                raise ShellSyntaxError("unbalanced $'…' quote")
            char = src[self.pos]
            if char == "'":
                self.pos += 1
                return "".join(out)
            if char != "\\":
                out.append(char)
                self.pos += 1
                continue
            esc = src[self.pos + 1 : self.pos + 2]
            if esc in ANSI_C_ESCAPES:
                out.append(ANSI_C_ESCAPES[esc])
                self.pos += 2
            elif esc == "x" and (hexes := re.match(r"[0-9a-fA-F]{1,2}", src[self.pos + 2 :])):
                out.append(chr(int(hexes.group(), 16)))
                self.pos += 2 + hexes.end()
            elif esc.isdigit() and (octs := re.match(r"[0-7]{1,3}", src[self.pos + 1 :])):
                out.append(chr(int(octs.group(), 8)))
                self.pos += 1 + octs.end()
            else:
                out.append("\\" + esc)
                self.pos += 2

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


def find_substitutions(text: str) -> list[str]:
    """Commands that `$(…)` and backticks inside expanded text (here-docs, `${…}`) would run."""
    lexer = _Lexer(text)
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
    return builder.substitutions


class _Parser:
    """Groups tokens into simple commands; checks that lists, pipes and groups are well formed."""

    def __init__(self, tokens: list[_Token]) -> None:
        self.tokens = tokens
        self.commands: list[Command] = []
        self.groups: list[str] = []
        self.compound_depth = 0
        self._reset(piped=False)
        self.need_command = False
        self.after_command = False

    def _reset(self, *, piped: bool) -> None:
        self.assignments: list[Word] = []
        self.words: list[Word] = []
        self.redirects: list[Redirect] = []
        self.piped = piped
        self.in_test = False

    def _empty(self) -> bool:
        return not (self.assignments or self.words or self.redirects)

    def _finish(self, *, piped_next: bool = False) -> None:
        if not self._empty():
            if self.in_test:
                raise ShellSyntaxError("'[[' without its closing ']]'")
            nested = bool(self.groups) or self.compound_depth > 0
            self.commands.append(
                Command(
                    tuple(self.assignments),
                    tuple(self.words),
                    tuple(self.redirects),
                    piped_input=self.piped,
                    nested=nested,
                )
            )
            self.after_command = True
            self.need_command = False
        self._reset(piped=piped_next)

    def parse(self) -> Script:
        index = 0
        while index < len(self.tokens):
            index = self._step(index)
        self._finish()
        if self.need_command:
            raise ShellSyntaxError("the command ends after an operator that needs another command")
        if self.groups:
            raise ShellSyntaxError(f"'{self.groups[-1]}' is never closed")
        return Script(tuple(self.commands))

    def _step(self, index: int) -> int:
        token = self.tokens[index]
        if self.in_test and token.kind == "op" and token.op in ("&&", "||", "<", ">", "(", ")"):
            self.words.append(Word(token.op))
            return index + 1
        if token.kind == "word":
            assert token.word is not None
            self._word(token.word)
            return index + 1
        if token.kind == "newline":
            if not self.in_test:
                self._finish()
            return index + 1
        if token.kind == "fd" or token.op in REDIRECT_OPS:
            return self._redirect(index)
        return self._control(token.op, index)

    def _word(self, word: Word) -> None:
        at_start = not self.words and not self.redirects
        if at_start and word.assignment and not self.words:
            self.assignments.append(word)
            return
        if at_start and not self.assignments and not word.quoted:
            if word.text in KEYWORDS_UNSUPPORTED:
                raise ShellSyntaxError(f"'{word.text}' blocks are not supported")
            if word.text in KEYWORDS_SKIPPED:
                self.compound_depth += word.text in KEYWORDS_OPENING
                self.compound_depth -= word.text in KEYWORDS_CLOSING
                self.after_command = word.text in KEYWORDS_CLOSING
                return
            if word.text == "{":
                self.groups.append("{")
                return
            if word.text == "}":
                self._close_group("{")
                return
            if word.text == "for":
                self.compound_depth += 1
            self.in_test = word.text == "[["
        elif self.in_test and word.text == "]]" and not word.quoted:
            self.in_test = False
        self.words.append(word)

    def _redirect(self, index: int) -> int:
        fd: int | None = None
        token = self.tokens[index]
        if token.kind == "fd":
            assert token.word is not None
            fd = int(token.word.text)
            index += 1
            token = self.tokens[index]
        op = token.op
        if token.heredoc is not None:
            heredoc = token.heredoc
            body = heredoc.body or ""
            target = Word(heredoc.delimiter.text, substitutions=heredoc.substitutions)
            self.redirects.append(Redirect(op, target, fd=fd, body=body))
            return index + 1
        target_token = self.tokens[index + 1] if index + 1 < len(self.tokens) else None
        if target_token is None or target_token.kind != "word":
            raise ShellSyntaxError(f"'{op}' is not followed by a file name")
        assert target_token.word is not None
        self.redirects.append(Redirect(op, target_token.word, fd=fd))
        return index + 2

    def _control(self, op: str, index: int) -> int:
        if op == "(":
            if not self._empty():
                raise ShellSyntaxError(
                    "'(' in the middle of a command (functions are not supported)"
                )
            self.groups.append("(")
            self.after_command = False
        elif op == ")":
            self._finish()
            self._close_group("(")
        elif op in LIST_OPS:
            if self._empty() and not self.after_command:
                raise ShellSyntaxError(f"'{op}' with no command before it")
            self._finish(piped_next=op in ("|", "|&"))
            self.need_command = op in ("&&", "||", "|", "|&")
            self.after_command = False
        else:
            raise ShellSyntaxError(f"'{op}' is not supported here")
        return index + 1

    def _close_group(self, opening: str) -> None:
        closing = ")" if opening == "(" else "}"
        if not self.groups or self.groups[-1] != opening:
            raise ShellSyntaxError(f"'{closing}' without a matching '{opening}'")
        self._finish()
        self.groups.pop()
        self.after_command = True


def parse_script(source: str) -> Script:
    """Read shell source into its simple commands; raise ShellSyntaxError when it cannot."""
    return _Parser(_Lexer(source).tokens()).parse()
