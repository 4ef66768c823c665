"""What the classifier knows about shell variables and the working folder while it reads a line.

Only literal assignments made earlier in the same line are known (`D=/tmp/x; ls $D`); a variable
that a loop, `read`, `printf -v`, `eval` or any builtin could have set is unknown, so its
expansion stays `RuntimeText`. For a command word the possible values are still worth judging
(`c=cat; for c in rm; do $c -rf /x; done` could run `rm`), on top of the floor that a command
word from an expansion is never read-only.
"""

from __future__ import annotations

import itertools
import posixpath
import re

from agent.safety.shell.options import word_set
from agent.safety.shell.shell_words import RuntimeText, Word

VARIABLE_RE = re.compile(r"\$(?:\{([A-Za-z_][A-Za-z0-9_]*)\}|([A-Za-z_][A-Za-z0-9_]*))")
MAX_VARIANTS = 16
DECLARING = frozenset({"export", "declare", "readonly", "local", "typeset"})
# Builtins that can set variables in this shell: after one, nothing earlier is trusted.
SETTERS = DECLARING | word_set(
    "read mapfile readarray printf getopts unset eval source . let command builtin wait "
    "compgen exec trap set shift cd pushd popd"
)


class Variables:
    """Possible values of each variable set so far (None: unknown)."""

    def __init__(self) -> None:
        self.values: dict[str, frozenset[str] | None] = {}

    def _single(self, name: str) -> str | None:
        options = self.values.get(name)
        return next(iter(options)) if options and len(options) == 1 else None

    def variants(self, words: tuple[Word, ...]) -> list[list[str]]:
        """Every argv the words may become: one per combination of known variable values.

        Loop variables (`for h in spark-a spark-b`) are known exactly, so each value is judged;
        when the combinations are too many, the words stay RuntimeText.
        """
        choices = [self._choices(word) for word in words]
        count = 1
        for options in choices:
            count *= len(options)
        if count > MAX_VARIANTS:
            choices = [opts if len(opts) == 1 else [[RuntimeText(w.text)]]
                       for opts, w in zip(choices, words, strict=True)]  # fmt: skip
        return [[w for part in combo for w in part] for combo in itertools.product(*choices)]

    def expand_one(self, word: Word) -> str:
        options = self._choices(word)
        if len(options) == 1 and len(options[0]) == 1:
            return options[0][0]
        return RuntimeText(word.text)

    def _choices(self, word: Word) -> list[list[str]]:
        if word.pattern or word.substitutions:
            return [[RuntimeText(word.text)]]
        if not word.dynamic:
            return [[word.text]]
        names = [a or b for a, b in VARIABLE_RE.findall(word.text)]
        leftover = VARIABLE_RE.sub("", word.text)
        known = [self.values.get(name) for name in names]
        if "$" in leftover or "`" in leftover or any(k is None for k in known):
            return [[RuntimeText(word.text)]]
        results: list[list[str]] = []
        for combo in itertools.product(*(sorted(k or ()) for k in known)):
            text = _substitute(word.text, dict(zip(names, combo, strict=True)))
            results.append([text] if word.quoted else text.split())
        return results

    def remember(self, assignments: tuple[Word, ...], *, nested: bool) -> None:
        for word in assignments:
            name = word.assignment
            if name is None:
                continue
            raw = word.text.split("=", 1)[1]
            value = self.expand_one(Word(raw, dynamic=word.dynamic, quoted=True))
            if isinstance(value, RuntimeText) or word.text.startswith(f"{name}+="):
                self.values[name] = None
                continue
            if not nested:
                self.values[name] = frozenset({value})
                continue
            before = self.values.get(name)  # a subshell or a branch may not have run
            self.values[name] = None if before is None else before | {value}

    def loop(self, words: list[str]) -> None:
        """`for NAME in WORDS`: NAME takes each word in turn (unknown if any word is)."""
        if not words:
            return
        name, rest = words[0], words[1:]
        items = rest[1:] if rest[:1] == ["in"] else None
        if items is None or any(isinstance(item, RuntimeText) for item in items):
            self.values[name] = None
            return
        before = self.values.get(name, frozenset())
        self.values[name] = None if before is None else before | frozenset(items)

    def after_command(self, argv: list[str], words: tuple[Word, ...]) -> None:
        if argv[0] not in SETTERS and not any("${" in w.text for w in words):
            return
        self.values = dict.fromkeys(self.values, None)
        if argv[0] in DECLARING:
            self.remember(tuple(w for w in words[1:] if w.assignment), nested=False)


def _substitute(text: str, table: dict[str, str]) -> str:
    return VARIABLE_RE.sub(lambda m: table[m.group(1) or m.group(2)], text)


def working_dir_after(argv: list[str], cwd: str | None) -> str | None:
    """The folder after `cd DIR` / `pushd DIR` (None when it cannot be known)."""
    if argv[0] not in ("cd", "pushd", "popd"):
        return cwd
    targets = [a for a in argv[1:] if not (a.startswith("-") and a != "-")]
    if argv[0] == "popd" or len(targets) != 1 or isinstance(targets[0], RuntimeText):
        return None
    target = targets[0]
    if target.startswith("/"):
        return posixpath.normpath(target)
    if target.startswith("~") or target == "-" or cwd is None:
        return None
    landed = posixpath.normpath(posixpath.join(cwd, target))
    return landed if landed.startswith(("/", "~")) else None  # `cd ..` out of home: unknown
