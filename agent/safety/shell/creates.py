"""Which containers a command line creates: each `docker run` / `docker create` with `--name`.

Read with the same parser and docker grammar the classifier uses, so a name is found wherever
the shell would run it (after `;`, in a pipe, behind `sudo`), and only when it is known before
the line runs: a name made by an expansion (`--name "$N"`) or a line that does not parse names
nothing. The session uses it to know what Scout created itself (agent/runtime/own_work.py).
"""

from __future__ import annotations

from agent.safety.shell.options import read_args
from agent.safety.shell.rules_docker import GLOBAL, RUN
from agent.safety.shell.shell_parse import ShellSyntaxError, parse_script
from agent.safety.shell.shell_words import RuntimeText

ENGINES = frozenset({"docker", "podman"})
CREATING = frozenset({"run", "create"})


def containers_created(command: str) -> list[str]:
    """The literal `--name`s of the containers `command` runs or creates, in order."""
    try:
        script = parse_script(command)
    except ShellSyntaxError:
        return []
    names: list[str] = []
    for simple in script.commands:
        argv = simple.argv
        while argv and argv[0].rsplit("/", 1)[-1] == "sudo":
            argv = argv[1:]  # `sudo docker run …` (no sudo options: those are not followed)
        if not argv or argv[0].rsplit("/", 1)[-1] not in ENGINES:
            continue
        rest = read_args(argv[1:], GLOBAL).rest
        if not rest or rest[0] not in CREATING:
            continue
        name = read_args(rest[1:], RUN).value("--name")
        if name and not isinstance(name, RuntimeText):
            names.append(name)
    return names
