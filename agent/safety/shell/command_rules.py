"""Which rule judges a command name: the programs the classifier knows, gathered by area.

A name without a rule is not provably read-only, so the classifier treats it as mutating.
`NETWORK_PROGRAMS` reach other hosts: no expansion may feed their arguments.
"""

from __future__ import annotations

import posixpath
import re

from agent.safety.shell.outcomes import ProgramRule
from agent.safety.shell.rules_changes import change_rules
from agent.safety.shell.rules_cluster import cluster_rules
from agent.safety.shell.rules_docker import docker_rules
from agent.safety.shell.rules_git import git_rules
from agent.safety.shell.rules_gpu import gpu_rules
from agent.safety.shell.rules_launch import launch_rules
from agent.safety.shell.rules_net_clients import net_client_rules
from agent.safety.shell.rules_network import network_rules
from agent.safety.shell.rules_packages import package_rules
from agent.safety.shell.rules_readers import reader_rules
from agent.safety.shell.rules_scripts import script_rules
from agent.safety.shell.rules_services import service_rules
from agent.safety.shell.rules_shell import shell_rules
from agent.safety.shell.rules_system import system_rules

RULES: dict[str, ProgramRule] = {
    **reader_rules(),
    **script_rules(),
    **system_rules(),
    **change_rules(),
    **network_rules(),
    **net_client_rules(),
    **docker_rules(),
    **service_rules(),
    **gpu_rules(),
    **package_rules(),
    **git_rules(),
    **launch_rules(),
    **shell_rules(),
    **cluster_rules(),
}
NETWORK_PROGRAMS = frozenset(
    {"curl", "wget", "dig", "nslookup", "host", "ping", "ping6", "tracepath", "traceroute",
     "ssh", "ssh-keyscan", "getent"}
)  # fmt: skip
INIT_SCRIPTS = "/etc/init.d/"
SYSTEM_BIN_RE = re.compile(r"^/(usr/(local/)?)?s?bin/|^/usr/local/cuda[^/]*/bin/")


def command_name(word: str) -> str | None:
    """The name a rule is looked up by: `/usr/bin/rm` → `rm`; `./run.sh` → None (a local file)."""
    if "/" not in word:
        return word
    clean = posixpath.normpath(re.sub(r"/+", "/", word))  # `/usr//bin/../bin/rm` is `rm`
    if clean.startswith(INIT_SCRIPTS):
        return clean
    if SYSTEM_BIN_RE.match(clean):
        return clean.rsplit("/", 1)[-1]
    return None


def rule_for(name: str) -> ProgramRule | None:
    if name.startswith("mkfs."):
        return RULES["mkfs"]
    if name.startswith(INIT_SCRIPTS):  # `/etc/init.d/docker restart` is `service docker restart`
        return lambda _name, args: RULES["service"]("service", [name[len(INIT_SCRIPTS) :], *args])
    return RULES.get(name)


def known_programs() -> list[str]:
    """Every program name the classifier has a rule for (for audits and the corpus test)."""
    return sorted(RULES)
