"""Abbreviated verbs are judged as the program expands them, by its own tables (issue 36,
item 3). The cases are generated from verb_tables.py (extracted from nmcli's, ip's and
bridge's sources): every verb path, written with each word cut to the shortest prefix the program
still expands to it, gets the label its full spelling gets. Before the tables, `nmcli c m …`
was judged as `connection monitor` (a read) while nmcli runs `connection modify`."""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import cast

import pytest

from agent.safety.shell.abbreviations import (
    iproute2_object,
    iproute2_subverb,
    iproute2_verb,
    nmcli_expand,
    nmcli_path,
)
from agent.safety.shell.judge import judge_shell
from agent.safety.shell.rules_network import IP_READ_ACTIONS
from agent.safety.shell.verb_tables import (
    IPROUTE2_OBJECTS,
    IPROUTE2_SUBVERBS,
    IPROUTE2_VERBS,
    NMCLI_COMMANDS,
)
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
IPROUTE2_CASES = [
    (program, obj, verb)
    for program, objects in IPROUTE2_OBJECTS.items()
    for obj in objects
    for verb, _ in IPROUTE2_VERBS[program][obj]
    if iproute2_verb(program, obj, verb) == verb  # strcmp aliases (`chg`) also: whole word
]
IPROUTE2_SUBVERB_CASES = [
    (program, obj, verb, sub)
    for program, objects in IPROUTE2_SUBVERBS.items()
    for obj, verbs in objects.items()
    for verb, (subs, _) in verbs.items()
    for sub, _ in subs
    if program == "ip"  # bridge's do_* functions test no word twice
]
IPROUTE2_SUBVERB_DEFAULTS = [
    (program, obj, verb, default)
    for program, objects in IPROUTE2_SUBVERBS.items()
    for obj, verbs in objects.items()
    for verb, (_, default) in verbs.items()
    if program == "ip"
]
IPROUTE2_PROGRAM_OBJECTS = [(p, obj) for p, objects in IPROUTE2_OBJECTS.items() for obj in objects]


@pytest.mark.parametrize("path", NMCLI_PATHS, ids=" ".join)
def test_an_abbreviated_nmcli_verb_gets_the_label_of_the_verb_nmcli_runs(
    path: tuple[str, ...],
) -> None:
    short = nmcli_abbreviated(path)
    assert nmcli_path(short)[0][: len(path)] == path
    full, cut = " ".join(["nmcli", *path]), " ".join(["nmcli", *short])
    assert judge_shell(cut).risk == judge_shell(full).risk, (cut, full)


@pytest.mark.parametrize(("program", "obj", "verb"), IPROUTE2_CASES, ids=" ".join)
def test_an_abbreviated_iproute2_verb_gets_the_label_of_the_verb_it_runs(
    program: str, obj: str, verb: str
) -> None:
    short_obj = shortest(obj, lambda w: iproute2_object(program, w)) or obj
    short_verb = shortest(verb, lambda w: iproute2_verb(program, obj, w)) or verb
    assert iproute2_object(program, short_obj) == obj
    assert iproute2_verb(program, obj, short_verb) == verb
    full, cut = f"{program} {obj} {verb} dev x", f"{program} {short_obj} {short_verb} dev x"
    assert judge_shell(cut).risk == judge_shell(full).risk, (cut, full)


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


@pytest.mark.parametrize(("program", "obj"), IPROUTE2_PROGRAM_OBJECTS, ids=" ".join)
def test_iproute2_takes_the_first_test_a_word_passes(program: str, obj: str) -> None:
    """matches() takes any non-empty prefix, strcmp() only the whole word (`chg`)."""
    objects = IPROUTE2_OBJECTS[program]
    assert iproute2_object(program, obj[:1]) == first_taking(obj[:1], objects)
    verbs = IPROUTE2_VERBS[program][obj]
    for verb, _ in verbs:
        for end in range(1, len(verb) + 2):
            word = verb[:end] + ("x" if end > len(verb) else "")
            passing = [name for name, prefix in verbs if prefix or name == word]
            assert iproute2_verb(program, obj, word) == first_taking(word, passing), word


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
        ("ip tcpm s", Risk.READ_ONLY),  # tcp_metrics.c's own cmds[] table: show
        ("ip tcp_metrics", Risk.READ_ONLY),  # no verb: list
        ("ip tcpm r 10.0.0.1", Risk.DESTRUCTIVE),  # remove
        ("ip tcp_metrics f all", Risk.DESTRUCTIVE),  # flush
        ("ip mptcp endpoint show id 1", Risk.READ_ONLY),  # ipmptcp.c: the block tests again
        ("ip -j mptcp endpoint", Risk.READ_ONLY),  # argc == 0: mptcp_addr_show
        ("ip mptcp limits", Risk.READ_ONLY),  # argc == 0: GET_LIMITS
        ("ip mptcp l s subflows 2", Risk.MUTATING),  # limits set, before show
        ("ip mptcp e f", Risk.DESTRUCTIVE),  # endpoint flush
        ("ip mptcp monitor", Risk.READ_ONLY),  # mptcp_monitor only listens
        ("bridge m", Risk.READ_ONLY),  # mdb show, not monitor
        ("bridge f a 00:11:22:33:44:55 dev eth0", Risk.MUTATING),  # fdb add
        ("bridge v s", Risk.READ_ONLY),  # vlan show
    ],
)
def test_named_abbreviations_expand_as_the_programs_do(command: str, risk: Risk) -> None:
    assert judge_shell(command).risk == risk, judge_shell(command).reason


@pytest.mark.parametrize(("program", "obj", "verb", "sub"), IPROUTE2_SUBVERB_CASES, ids=" ".join)
def test_a_verb_that_tests_the_next_word_is_judged_by_that_word(
    program: str, obj: str, verb: str, sub: str
) -> None:
    """`ip mptcp endpoint show` reads and `ip mptcp endpoint flush` removes: the word after
    the verb decides, as the verb's block in ip's source tests it, abbreviated or not."""
    short_verb = shortest(verb, lambda w: iproute2_verb(program, obj, w)) or verb
    short_sub = shortest(sub, lambda w: iproute2_subverb(program, obj, verb, w)) or sub
    full = judge_shell(f"{program} {obj} {verb} {sub} id 1")
    cut = judge_shell(f"{program} -j {obj} {short_verb} {short_sub} id 1")
    assert cut.risk == full.risk, (cut.reason, full.reason)
    assert (full.risk == Risk.READ_ONLY) == (sub in IP_READ_ACTIONS), full.reason
    assert f"'{program} {obj} {verb} {sub}'" in full.reason


@pytest.mark.parametrize(
    ("program", "obj", "verb", "default"), IPROUTE2_SUBVERB_DEFAULTS, ids=" ".join
)
def test_with_no_word_after_the_verb_the_block_runs_its_own_default(
    program: str, obj: str, verb: str, default: str
) -> None:
    """`ip mptcp endpoint` shows (the block's `argc == 0` branch); where a block runs nothing
    without a word (`ip sr tunsrc`: ip stops with an error) the gate does not call it a read."""
    alone = judge_shell(f"{program} {obj} {verb}")
    if default:
        assert alone.risk == judge_shell(f"{program} {obj} {verb} {default}").risk
    else:
        assert alone.risk != Risk.READ_ONLY, alone.reason
