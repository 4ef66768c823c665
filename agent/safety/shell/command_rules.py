"""Which rule judges a command name: the allowlist, gathered from the per-area rule modules.

A name without a rule is not provably read-only, so the classifier treats it as mutating.
"""

from __future__ import annotations

import re

from agent.safety.shell.outcomes import Rule
from agent.safety.shell.rules_basic import DATA_ONLY_ARGS, basic_rules, is_mkfs
from agent.safety.shell.rules_launch import launch_rules
from agent.safety.shell.rules_network import network_rules
from agent.safety.shell.rules_services import service_rules

RULES: dict[str, Rule] = {**basic_rules(), **service_rules(), **network_rules(), **launch_rules()}
SYSTEM_BIN_RE = re.compile(r"^/(usr/(local/)?)?s?bin/|^/usr/local/cuda[^/]*/bin/")


def command_name(word: str) -> str | None:
    """The name a rule is looked up by: `/usr/bin/rm` → `rm`; `./run.sh` → None (a local file)."""
    if "/" not in word:
        return word
    if SYSTEM_BIN_RE.match(word):
        return word.rsplit("/", 1)[-1]
    return None


def rule_for(name: str) -> Rule | None:
    if is_mkfs(name):
        return RULES["mkfs"]
    return RULES.get(name)


def arguments_are_data(name: str) -> bool:
    """True when no argument can make the command write (so `$VAR` arguments are harmless)."""
    return name in DATA_ONLY_ARGS
