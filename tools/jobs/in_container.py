"""Jobs that run a command inside a container (`docker exec CONTAINER …`): stopping them too.

Killing a `docker exec` client does not end the process it started: the daemon started that
process, and exec has no signal forwarding and no kill API (docker/cli#5309, Docker 26.1: after
`kill -- -$$` of the client's group, `sleep 300` still runs in the container; moby/moby#9098,
moby/moby#35703). So a job whose command is one plain `docker exec` is started with the
container's own sh recording the pid of the command (`echo $$ > PIDFILE; exec "$@"`: exec keeps
that pid, and the command runs unchanged), and job_stop signals that pid inside the container
with sh builtins (`read`, `kill`), which every image with a /bin/sh has; pkill may be missing.
"""

from __future__ import annotations

import shlex
from dataclasses import dataclass

_FLAGS = {"-i", "-t", "-it", "-ti", "--interactive", "--tty", "--privileged"}
_VALUED = {"-e", "--env", "-u", "--user", "-w", "--workdir", "--env-file", "--detach-keys"}
_OPERATORS = set(";&|<>()`$\n")
_EXPANDED_BY_THE_HOST = set("$`*?[~\\")  # rewritten, these would no longer expand on the host


@dataclass(frozen=True)
class InContainer:
    container: str
    wrapped: str  # the command as started: the same exec, its pid recorded in the container


def pidfile(name: str) -> str:
    return f"/tmp/.scout-job-{name}.pid"


def in_container(command: str, name: str) -> InContainer | None:
    """The container a job's command execs into, if the command is one plain, attached
    `docker exec`; None for anything else (pipes, lists, `-d`, other commands)."""
    if set(command) & _EXPANDED_BY_THE_HOST:
        return None
    try:
        lexer = shlex.shlex(command, posix=True, punctuation_chars=True)
        lexer.whitespace_split = True
        words = list(lexer)
    except ValueError:
        return None
    if any(set(word) <= _OPERATORS for word in words) or words[:2] != ["docker", "exec"]:
        return None
    options, i = [], 2
    while i < len(words) and words[i].startswith("-"):
        key = words[i].split("=", 1)[0]
        if key in _VALUED and "=" not in words[i]:
            options += words[i : i + 2]
            i += 2
        elif key in _FLAGS or key in _VALUED:
            options.append(words[i])
            i += 1
        else:
            return None  # -d, or an option not known to keep the exec attached
    if len(words) - i < 2:
        return None
    container, argv = words[i], words[i + 1 :]
    script = f'echo $$ > {pidfile(name)}; exec "$@"'
    wrapped = ["docker", "exec", *options, container, "sh", "-c", script, "scout-job", *argv]
    return InContainer(container, shlex.join(wrapped))


def stop_inside(tries: int) -> str:
    """Shell for the stop script (with `$T`, `$d`, `$n` set): TERM the recorded process inside
    the job's container, KILL it after `tries` half-seconds; prints `$T inside WORD CONTAINER`."""
    pid = f"{pidfile('$n')}"
    alive = f'docker exec "$c" sh -c "read -r p < {pid} && kill -0 \\"\\$p\\"" 2>/dev/null'
    signal = f'docker exec "$c" sh -c "read -r p < {pid} && kill -SIG \\"\\$p\\"" 2>/dev/null'
    return "\n".join(
        [
            '  if [ -s "$d/inside" ]; then read -r c < "$d/inside"',
            f"    if {alive}; then {signal.replace('SIG', 'TERM')}; i=0",
            f'      while [ "$i" -lt {tries} ] && {alive}; do i=$((i+1)); sleep 0.5; done',
            f"      if {alive}; then {signal.replace('SIG', 'KILL')}; "
            f'echo "$T inside killed $c"; else echo "$T inside terminated $c"; fi',
            '    else echo "$T inside gone $c"; fi',
            "  fi",
        ]
    )
