"""Abbreviated verbs expanded as the program itself expands them (issue 36, item 3).

`nmcli c m` is `connection modify`, not `connection monitor`, because nmcli walks its table in
order and takes the first entry the word is a prefix of; `ip l s` is `link set`, `bridge m`
is `mdb`. Judging the words as written (or with a hand-made table in another order) lets a
change pass as a read.
The tables are the programs' own (verb_tables.py, extracted from their sources); the rules
here are their matching functions, transcribed:

- nmcli, src/libnmc-base/nm-client-utils.c `matches(cmd, pattern)`: a non-empty `cmd` no
  longer than `pattern` that begins it; nmc_do_cmd takes the first table entry it accepts.
- iproute2, lib/utils.c `matches(prefix, string)`: a non-empty `prefix` that begins `string`;
  ip.c's do_cmd and each object's do_* take the first test, in source order, that passes
  (`strcmp` tests want the whole word).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import cast

from agent.safety.shell.verb_tables import (
    IPROUTE2_OBJECTS,
    IPROUTE2_SUBVERBS,
    IPROUTE2_VERBS,
    NMCLI_COMMANDS,
)


def nmcli_matches(word: str, name: str) -> bool:
    return bool(word) and len(word) <= len(name) and name.startswith(word)


def iproute2_matches(word: str, name: str) -> bool:
    return bool(word) and name.startswith(word)


def nmcli_expand(word: str, names: Iterable[str]) -> str | None:
    """The entry of an nmcli table (in its order) that `word` runs, or None for none."""
    return next((name for name in names if name and nmcli_matches(word, name)), None)


def nmcli_path(words: list[str]) -> tuple[tuple[str, ...], list[str], bool]:
    """nmcli's words walked down its command tree: the full verb path it runs (with the
    verb a table runs when none is given), the words left for that verb, and False where a
    word no table entry takes ended the walk (it is then the path's last element)."""
    node = cast(Mapping[str, object], NMCLI_COMMANDS)
    path: list[str] = []
    rest = list(words)
    while node:
        if not rest:
            default = cast(str, node.get("", ""))
            path.append(default)
            node = cast(Mapping[str, object], node.get(default, {})) if default else {}
            continue
        verb = nmcli_expand(rest[0], node)
        if verb is None:
            return (*path, rest[0]), rest[1:], False
        path.append(verb)
        rest = rest[1:]
        node = cast(Mapping[str, object], node[verb])
    return tuple(path), rest, True


def iproute2_object(program: str, word: str) -> str | None:
    """The object of an iproute2 program's cmds[] (`ip`, `bridge`) that `PROGRAM WORD` runs."""
    return next((name for name in IPROUTE2_OBJECTS[program] if iproute2_matches(word, name)), None)


def iproute2_verb(program: str, obj: str, word: str) -> str | None:
    """The verb `PROGRAM OBJ WORD` runs, by the tests OBJ's do_* function makes in order (None
    where none passes, or where the object names no table Scout could read)."""
    for name, any_prefix in IPROUTE2_VERBS[program].get(obj, ()):
        if iproute2_matches(word, name) if any_prefix else word == name:
            return name
    return None


def iproute2_takes_subverb(program: str, obj: str, verb: str) -> bool:
    """Whether VERB's block in OBJ's do_* function takes the next word and tests it again, as
    `ip mptcp endpoint show` and `ip sr tunsrc set` do."""
    return verb in IPROUTE2_SUBVERBS[program].get(obj, {})


def iproute2_subverb(program: str, obj: str, verb: str, word: str | None) -> str | None:
    """The word `PROGRAM OBJ VERB WORD` runs, by the tests VERB's block makes in order; with
    no WORD, the one the block runs when none follows. None where no test passes or nothing
    runs without a word (ip then stops with an error)."""
    words, default = IPROUTE2_SUBVERBS[program][obj][verb]
    if word is None:
        return default or None
    for name, any_prefix in words:
        if iproute2_matches(word, name) if any_prefix else word == name:
            return name
    return None
