"""Abbreviated verbs are judged as the program expands them, by its own tables (issue 36,
item 3). The cases are generated from verb_tables.py (extracted from nmcli's and ip's
sources): every verb path, written with each word cut to the shortest prefix the program
still expands to it, gets the label its full spelling gets. Before the tables, `nmcli c m …`
was judged as `connection monitor` (a read) while nmcli runs `connection modify`."""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import cast

import pytest

from agent.safety.shell.abbreviations import ip_object, ip_verb, nmcli_expand, nmcli_path
from agent.safety.shell.judge import judge_shell
from agent.safety.shell.verb_tables import IP_OBJECTS, IP_VERBS, NMCLI_COMMANDS
from tools.risk.assessment import Risk

Tree = Mapping[str, object]


def nmcli_paths(node: Tree, path: tuple[str, ...] = ()) -> Iterator[tuple[str, ...]]:
    """Every verb path of nmcli's command tree, from its root."""
    for verb, child in node.items():
        if verb:
            yield (*path, verb)
            yield from nmcli_paths(cast(Tree, child), (*path, verb))


def shortest(word: str, expand: Callable[[str], str | None]) -> str | None:
    """The shortest prefix of `word` that `expand` turns into `word` (None where an earlier
    entry takes every prefix, as ip's `neighbour` behind `neighbor`)."""
    return next((word[:n] for n in range(1, len(word) + 1) if expand(word[:n]) == word), None)


def nmcli_abbreviated(path: tuple[str, ...]) -> list[str]:
    node, words = cast(Tree, NMCLI_COMMANDS), []
    for verb in path:
        word = shortest(verb, lambda w, names=list(node): nmcli_expand(w, names))
        words.append(word or verb)
        node = cast(Tree, node[verb])
    return words


def first_taking(word: str, names: Sequence[str]) -> str | None:
    """The rule both programs state in C, written out: the first name, in table order, that
    `word` is a non-empty prefix of."""
    return next((name for name in names if word and name[: len(word)] == word), None)


NMCLI_PATHS = sorted(nmcli_paths(cast(Tree, NMCLI_COMMANDS)))
IP_CASES = [
    (obj, verb)
    for obj in IP_OBJECTS
    for verb, _ in IP_VERBS[obj]
    if ip_verb(obj, verb) == verb  # strcmp aliases (`chg`) also pass: the whole word
]


@pytest.mark.parametrize("path", NMCLI_PATHS, ids=" ".join)
def test_an_abbreviated_nmcli_verb_gets_the_label_of_the_verb_nmcli_runs(
    path: tuple[str, ...],
) -> None:
    short = nmcli_abbreviated(path)
    assert nmcli_path(short)[0][: len(path)] == path
    full, cut = " ".join(["nmcli", *path]), " ".join(["nmcli", *short])
    assert judge_shell(cut).risk == judge_shell(full).risk, (cut, full)


@pytest.mark.parametrize(("obj", "verb"), IP_CASES, ids=" ".join)
def test_an_abbreviated_ip_verb_gets_the_label_of_the_verb_ip_runs(obj: str, verb: str) -> None:
    short_obj = shortest(obj, ip_object) or obj
    names = [name for name, _ in IP_VERBS[obj]]
    short_verb = shortest(verb, lambda w: ip_verb(obj, w)) or verb
    assert ip_object(short_obj) == obj and ip_verb(obj, short_verb) == verb
    full, cut = f"ip {obj} {verb} dev x", f"ip {short_obj} {short_verb} dev x"
    assert judge_shell(cut).risk == judge_shell(full).risk, (cut, full, names)


@pytest.mark.parametrize("path", NMCLI_PATHS, ids=" ".join)
def test_nmcli_takes_the_first_entry_a_word_begins(path: tuple[str, ...]) -> None:
    node = cast(Tree, NMCLI_COMMANDS)
    for verb in path[:-1]:
        node = cast(Tree, node[verb])
    names = [name for name in node if name]
    last = path[-1]
    for end in range(len(last) + 2):
        word = last[:end] + ("x" if end > len(last) else "")
        assert nmcli_expand(word, names) == first_taking(word, names), word


@pytest.mark.parametrize("obj", IP_OBJECTS)
def test_ip_takes_the_first_test_a_word_passes(obj: str) -> None:
    """matches() takes any non-empty prefix, strcmp() only the whole word (`chg`)."""
    assert ip_object(obj[:1]) == first_taking(obj[:1], IP_OBJECTS)
    for verb, _ in IP_VERBS[obj]:
        for end in range(1, len(verb) + 2):
            word = verb[:end] + ("x" if end > len(verb) else "")
            passing = [name for name, prefix in IP_VERBS[obj] if prefix or name == word]
            assert ip_verb(obj, word) == first_taking(word, passing), (obj, word)


@pytest.mark.parametrize(
    ("command", "risk"),
    [
        ("nmcli c m id wired ipv4.method manual", Risk.MUTATING),  # modify, before monitor
        ("nmcli d c eth0", Risk.MUTATING),  # checkpoint, before connect
        ("nmcli d m", Risk.READ_ONLY),  # monitor, before modify
        ("nmcli g r", Risk.MUTATING),  # general reload
        ("ip l s eth0 mtu 9000", Risk.MUTATING),  # link set
        ("ip a ch 10.0.0.1/24 dev eth0", Risk.MUTATING),  # address change
        ("ip n d 10.0.0.1 dev eth0", Risk.DESTRUCTIVE),  # neighbor delete
        ("ip a s", Risk.READ_ONLY),
    ],
)
def test_named_abbreviations_expand_as_the_programs_do(command: str, risk: Risk) -> None:
    assert judge_shell(command).risk == risk, judge_shell(command).reason
