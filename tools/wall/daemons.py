"""Reads that need a daemon: the wall closes every Unix socket, so these cannot run inside it.

A client of a daemon (docker, systemctl, nmcli: limits.DAEMON_CLIENTS) reaches its daemon only
through a Unix socket (docker.sock, D-Bus), and the socket is the whole daemon's power: a POST
to docker's socket is root. Inside the wall they fail; so a command line that uses one runs
unasked only when it is, whole, one of DAEMON_READ_SHAPES (a fixed read verb, fixed options, a
`--format` template, which the client renders itself), and then outside the wall, as the probe
pack's daemon sections do. Any other use of a daemon client is an asked step.
"""

from __future__ import annotations

import re
import shlex

from tools.wall.limits import DAEMON_CLIENTS

_TEMPLATE = r"--format(=| )'[^']*'"
_NAME = r"[A-Za-z0-9][A-Za-z0-9_.-]{0,127}"
DAEMON_READ_SHAPES = tuple(
    re.compile(shape)
    for shape in (
        rf"docker (ps|container ls)( -a| --all| --no-trunc| -q| {_TEMPLATE})*",
        rf"docker (images|image ls)( -a| --no-trunc| -q| {_TEMPLATE})*",
        rf"docker (version|info)( {_TEMPLATE})?",
        rf"(timeout \d{{1,3}} )?docker stats --no-stream( --no-trunc| -a| {_TEMPLATE})*",
        rf"docker inspect( {_TEMPLATE})?( {_NAME})+",
        rf"docker logs( --tail \d{{1,6}})? {_NAME}",
        rf"systemctl (status|is-active|is-enabled|show)( --no-pager| -n \d{{1,4}})*( {_NAME})+",
        r"systemctl list-units( --no-pager| --type=[a-z]+| --state=[a-z]+)*",
        rf"journalctl( --no-pager| -n \d{{1,5}}| -u {_NAME}| -b| -k)+",
    )
)
_SEPARATORS = {";", "|", "||", "&&", "&", "(", ")", "{", "}", "!", "then", "do", "else"}
_PREFIXES = {"sudo", "-n", "timeout", "nice", "env", "exec", "command", "nohup", "setsid"}


def daemon_read(command: str) -> bool:
    """Whether the whole command line is one daemon read shape (spaces collapsed)."""
    line = " ".join(command.split())
    return any(shape.fullmatch(line) for shape in DAEMON_READ_SHAPES)


def daemon_client(command: str) -> str | None:
    """The first daemon client the line starts as a command, or None. Unparseable text is
    scanned word by word, so a client hidden in it is still found (unknown raises)."""
    try:
        lexer = shlex.shlex(command, posix=True, punctuation_chars=";&|()")
        lexer.whitespace_split = True
        words = list(lexer)
    except ValueError:
        words = command.replace(";", " ; ").split()
    at_command = True
    for word in words:
        name = word.rsplit("/", 1)[-1]
        if word in _SEPARATORS or word.startswith(("$(", "`")):
            at_command = True
            name = word.lstrip("$(`")
            if name not in DAEMON_CLIENTS:
                continue
        if at_command and name in DAEMON_CLIENTS:
            return name
        if at_command and (name in _PREFIXES or "=" in word or name.isdigit()):
            continue
        at_command = False
    return None
