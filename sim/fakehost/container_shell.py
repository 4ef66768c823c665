"""The few POSIX sh builtins a command inside a container may lean on: `read -r VAR < FILE`,
`kill [-SIG] PID`, `exec`, `$$` and `"$@"` (`echo … > FILE` is container_files.py's redirection).

Every image with a /bin/sh has them as builtins (dash, bash, busybox ash; POSIX.1-2017 XCU
"Special Built-In Utilities" for exec, the sh(1) manual for read and kill), unlike pkill/pgrep,
which slim images lack (procps is a separate package: e.g. kyuz0/amd-strix-halo-toolboxes#46
stops llama-server inside a container with a /proc loop for that reason). So a caller that must
end a process inside a container records its pid with `echo $$ > /tmp/F; exec "$@"` and later
signals it with `read -r p < /tmp/F && kill -TERM "$p"`: that is what these make work here.
`kill` signals only processes of this container (the pids the simulated engine recorded).
"""

from __future__ import annotations

import os
import re
import signal
from collections.abc import Callable

from . import container_files, procs
from .container import Container

_INPUT_WORD = re.compile(r"^0?<(.*)$")
_SIGNALS = {"0": 0, "TERM": signal.SIGTERM, "KILL": signal.SIGKILL, "INT": signal.SIGINT}


def take_input(words: list[str]) -> tuple[list[str], str | None]:
    """(words without input redirections, the file stdin comes from). Output redirections
    never get here: run_line applies them first (container_files.mark)."""
    kept: list[str] = []
    into = None
    i = 0
    while i < len(words):
        match = _INPUT_WORD.match(words[i])
        if match is None:
            kept.append(words[i])
            i += 1
            continue
        into = match[1]
        if not into and i + 1 < len(words):
            i += 1
            into = words[i]
        i += 1
    return kept, into


def expand(argv: list[str], ctr: Container, env: dict[str, str]) -> list[str]:
    """`$$`, `"$@"`, `$1`… and `$VAR` / `${VAR}` as sh expands them (no word splitting)."""
    words: list[str] = []
    for word in argv:
        if word == "$@":
            words += ctr.args
            continue
        word = word.replace("$$", str(os.getpid()))
        words.append(
            re.sub(
                r"\$\{?([A-Za-z_][A-Za-z0-9_]*|[1-9])\}?", lambda m: _value(m[1], ctr, env), word
            )
        )
    return words


def _value(name: str, ctr: Container, env: dict[str, str]) -> str:
    if name.isdigit():
        return ctr.args[int(name) - 1] if int(name) <= len(ctr.args) else ""
    return env.get(name, "")


def builtin(
    ctr: Container, cmd: str, args: list[str], into: str | None,
    run: Callable[[Container, list[str]], int],
) -> int | None:  # fmt: skip
    """Run `cmd` if it is one of these builtins; None when it is not."""
    if cmd == "read":
        names = [a for a in args if not a.startswith("-")]
        text = container_files.read(ctr.host_dir, ctr.id, into) if into else ""
        if text is None:
            return 1
        line = text.split("\n")[0]
        if names:
            ctr.env[names[0]] = line
        return 0 if into else 1
    if cmd == "exec":
        return run(ctr, args) if args else 0
    if cmd == "kill":
        return _kill(ctr, args)
    return None


def _kill(ctr: Container, args: list[str]) -> int:
    sig = signal.SIGTERM
    if args and args[0].startswith("-") and args[0] != "--":
        sig = _SIGNALS.get(args.pop(0)[1:].removeprefix("SIG"), signal.SIGTERM)
    pids = [a for a in args if a != "--"]
    ours = set(ctr.record().get("pids", []))
    code = 0
    for word in pids:
        pid = int(word) if word.isdigit() else -1
        alive = pid in ours and os.path.exists(f"/proc/{pid}")
        if not alive:
            code = 1
        elif sig:
            procs.signal_ours([pid], ctr.host_dir, sig)
    return code
