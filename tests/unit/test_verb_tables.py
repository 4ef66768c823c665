"""The committed verb tables name their source commit, and every verb the gate lets read is
one those sources define: a table regenerated from a newer nmcli or ip that drops or renames
a verb fails here instead of quietly reading a different command."""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import cast

from agent.safety.shell import verb_tables
from agent.safety.shell.rules_network import IP_READ_ACTIONS, IP_READ_PAIRS, NMCLI_READ
from agent.safety.shell.verb_tables import IPROUTE2_VERBS, NMCLI_COMMANDS


def test_each_table_cites_the_commit_it_was_read_from() -> None:
    for url in (verb_tables.NMCLI_SOURCE, verb_tables.IP_SOURCE):
        assert re.fullmatch(r"https://github\.com/[\w-]+/[\w-]+/tree/[0-9a-f]{40}", url), url


def test_every_nmcli_read_is_a_path_of_nmclis_own_tree() -> None:
    for path in NMCLI_READ:
        node = cast(Mapping[str, object], NMCLI_COMMANDS)
        for verb in path[:-1]:
            node = cast(Mapping[str, object], node[verb])
        assert path[-1] in node or node.get("") == path[-1], path


def test_every_ip_read_is_a_verb_ips_own_functions_test() -> None:
    every_verb = {verb for verbs in IPROUTE2_VERBS["ip"].values() for verb, _ in verbs}
    assert every_verb >= IP_READ_ACTIONS
    for obj, verb in IP_READ_PAIRS:
        assert verb in dict(IPROUTE2_VERBS["ip"][obj]), (obj, verb)
