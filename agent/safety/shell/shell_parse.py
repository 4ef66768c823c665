"""A small shell reader: enough of the POSIX/bash grammar to find every command a string would run.

It never executes anything and does not try to be a whole shell. Anything it does not understand
raises `ShellSyntaxError`; the classifier then treats the command as mutating. The lexer
(`shell_lexer`) turns text into words and operators; this parser groups them into simple commands
(`shell_words`) and checks that lists, pipes and groups are well formed.
"""

from __future__ import annotations

from agent.safety.shell.shell_lexer import Lexer, Token
from agent.safety.shell.shell_words import (
    Command,
    Redirect,
    RuntimeText,
    Script,
    ShellSyntaxError,
    Word,
)

__all__ = [
    "Command",
    "Redirect",
    "RuntimeText",
    "Script",
    "ShellSyntaxError",
    "Word",
    "parse_script",
]

KEYWORDS_SKIPPED = frozenset(
    {"if", "then", "elif", "else", "fi", "while", "until", "do", "done", "!"}
)
KEYWORDS_OPENING = frozenset({"if", "while", "until"})
KEYWORDS_CLOSING = frozenset({"fi", "done"})
KEYWORDS_UNSUPPORTED = frozenset({"case", "esac", "function", "select", "coproc"})
REDIRECT_OPS = frozenset({"&>>", "<<<", "<<-", "&>", ">>", ">|", ">&", "<&", "<<", "<>", "<", ">"})
LIST_OPS = frozenset({";", "&", "&&", "||", "|", "|&"})


class _Parser:
    """Groups tokens into simple commands; checks that lists, pipes and groups are well formed."""

    def __init__(self, tokens: list[Token]) -> None:
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
            target = Word(
                heredoc.delimiter.text,
                substitutions=heredoc.substitutions,
                expansions=heredoc.expansions,
            )
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
    return _Parser(Lexer(source).tokens()).parse()
