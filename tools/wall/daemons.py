"""Reads the wall cannot answer truly: a daemon's, and other processes' details.

A client of a daemon (docker, systemctl, nmcli: limits.DAEMON_CLIENTS) reaches its daemon only
through a socket (docker.sock, D-Bus, the API server), and the socket is the whole daemon's
power: a POST to docker's socket is root, a D-Bus call restarts a unit. The wall closes every
unix socket, so:

- docker and the D-Bus clients (dbus_clients.D_BUS_CLIENTS: systemctl, busctl, gdbus, nmcli,
  timedatectl, ...) reach their daemon inside the wall through a read-only proxy the wall's
  helper starts for the call (host_docker_proxy.py: GET/HEAD of listed read endpoints;
  host_dbus_proxy.py: method calls on a read list): a line whose daemon clients are all
  proxied (PROXIED_CLIENTS), with no option or variable that sends one elsewhere (`-H`,
  `--context`, DOCKER_HOST=; `--user`, `-M`, `--address`, DBUS_*=), runs walled unasked
  whatever its verb, and anything but a read fails at the proxy;
- other clients have no such filter: a command line that uses one runs unasked only when it
  is, whole, one of OUTSIDE_READ_SHAPES (a fixed read verb, fixed options, a `--format`
  template, which the client renders itself), and then outside the wall, as the probe pack's
  daemon sections do: the shape is the filter that passes reads alone. journalctl is one:
  it reads the journal's files, no bus. Any other use asks.

Readers of other processes' details (`ss -p`, `lsof`, `fuser`, `netstat -p`) read
/proc/PID/fd of processes outside the wall, which Landlock hides from a walled process without
a word: `ss -tlnp` loses its process column, `lsof -i` prints nothing. Their exact read shapes
(no `ss -K`, no `fuser -k`) run outside the wall too; anything else with them asks.
"""

from __future__ import annotations

import re
import shlex

from tools.wall.dbus_clients import D_BUS_CLIENTS, line_names_a_bus, sent_elsewhere
from tools.wall.limits import DAEMON_CLIENTS

_TEMPLATE = r"--format(=| )'[^']*'"
_NAME = r"[A-Za-z0-9][A-Za-z0-9_.-]{0,127}"
_OUT = r"( -o (wide|json|yaml|name))?"
OUTSIDE_READ_SHAPES = tuple(
    re.compile(shape)
    for shape in (
        rf"journalctl( --no-pager| -n \d{{1,5}}| -u {_NAME}| -b( -?\d{{1,3}})?| -k)+",
        r"crictl (ps|pods|images)( -a)?",
        rf"kubectl( -n {_NAME})? get [a-z.,]+( {_NAME})?( -A| --all-namespaces| -n {_NAME})*"
        rf"{_OUT}( -A| -n {_NAME})*",
        rf"kubectl( -n {_NAME})? (describe [a-z.]+|logs)( -n {_NAME})? {_NAME}"
        r"( --tail=\d{1,6})?",
        r"kubectl top (nodes|pods)( -A)?",
        r"ss -[tulnpaxe4]{1,8}",
        r"netstat -[tulnpa]{1,6}",
        r"lsof -i( ?(TCP|UDP)?:\d{1,5})?( -P| -n)*",
        r"fuser -v /dev/nvidia\d{1,2}",
    )
)
# the wall's helper gives these a read-only proxy to their daemon
PROXIED_CLIENTS = ("docker", *D_BUS_CLIENTS)
# docker's global options that name another daemon than the proxy (docker(1): -H, --context)
_ELSEWHERE = re.compile(r"(-H|--host|-c|--context)(=.*|\Z)|-H.+")
_GLOBAL_WITH_VALUE = {"--config", "-l", "--log-level", "--tlscacert", "--tlscert", "--tlskey"}
# docker's verbs whose requests the proxy passes (GETs of its read endpoints): any other
# verb (exec, run, rm, pull, cp, ...) it refuses, so a line with one asks instead of failing.
_DOCKER_READS = {"ps", "images", "inspect", "logs", "stats", "top", "port", "diff", "history",
                 "info", "version", "events"}  # fmt: skip
_DOCKER_MANAGED_READS = {
    "container": {"ls", "list", "ps", "inspect", "logs", "stats", "top", "port", "diff"},
    "image": {"ls", "list", "inspect", "history"},
    "network": {"ls", "list", "inspect"},
    "volume": {"ls", "list", "inspect"},
    "system": {"df", "info", "events"},
    "node": {"ls", "list", "inspect", "ps"},
    "service": {"ls", "list", "inspect", "logs", "ps"},
    "plugin": {"ls", "list", "inspect"},
    "config": {"ls", "list", "inspect"},
}
_SEPARATORS = {";", "|", "||", "&&", "&", "(", ")", "{", "}", "!", "then", "do", "else"}
_PREFIXES = {"sudo", "-n", "timeout", "nice", "env", "exec", "command", "nohup", "setsid"}


def outside_read(command: str) -> bool:
    """Whether the whole command line is one read shape that runs outside the wall."""
    line = " ".join(command.split())
    return any(shape.fullmatch(line) for shape in OUTSIDE_READ_SHAPES)


def daemon_client(command: str) -> str | None:
    """The first daemon client the line starts as a command, or None."""
    return next(iter(daemon_clients(command)), None)


def daemon_clients(command: str) -> list[str]:
    """Every daemon client the line starts as a command, in order."""
    words = _words(command)
    return [_name(words[i]) for i in _commands(words) if _name(words[i]) in DAEMON_CLIENTS]


def unproxied_client(command: str) -> str | None:
    """The first daemon client the line starts that the wall's read-only proxies do not
    serve: one not in PROXIED_CLIENTS, docker sent elsewhere (`-H`, `--context`, a
    DOCKER_HOST or DOCKER_CONTEXT anywhere in the line), a D-Bus client sent to another bus
    (dbus_clients.py); None when all reach a proxy."""
    words = _words(command)
    for index in _commands(words):
        name = _name(words[index])
        if name not in DAEMON_CLIENTS:
            continue
        if name not in PROXIED_CLIENTS:
            return name
        if name == "docker" and _sent_elsewhere(words[index + 1 :]):
            return name
        if name in D_BUS_CLIENTS and (
            line_names_a_bus(command) or sent_elsewhere(name, _own_words(words[index + 1 :]))
        ):
            return name
    return "docker" if "DOCKER_HOST" in command or "DOCKER_CONTEXT" in command else None


def _own_words(words: list[str]) -> list[str]:
    """A command's words up to the next shell operator."""
    for index, word in enumerate(words):
        if word in _SEPARATORS:
            return words[:index]
    return words


def docker_change_verb(command: str) -> str | None:
    """The first docker verb in the line that the read-only proxy would refuse (`exec`,
    `container rm`), or None when every docker the line starts only reads."""
    words = _words(command)
    for index in _commands(words):
        if _name(words[index]) != "docker":
            continue
        verb = _verb_words(words[index + 1 :])
        if not verb:
            continue  # `docker`, `docker --help`: the client answers itself
        reads = _DOCKER_MANAGED_READS.get(verb[0])
        if reads is None and verb[0] not in _DOCKER_READS:
            return verb[0]
        if reads is not None and verb[1:2] and verb[1] not in reads:
            return " ".join(verb)
    return None


def _verb_words(words: list[str]) -> list[str]:
    """docker's verb (and sub-verb) after its global options, up to two words."""
    found: list[str] = []
    taking_value = False
    for word in words:
        if word in _SEPARATORS or len(found) == 2:
            break
        if taking_value:
            taking_value = False
        elif word.startswith("-"):
            taking_value = not found and word in _GLOBAL_WITH_VALUE
        else:
            found.append(word)
    return found


def _sent_elsewhere(words: list[str]) -> bool:
    """Whether docker's global options (before its verb) name another daemon endpoint."""
    taking_value = False
    for word in words:
        if taking_value:
            taking_value = False
            continue
        if _ELSEWHERE.fullmatch(word):
            return True
        if not word.startswith("-") or word in _SEPARATORS:
            return False
        taking_value = word in _GLOBAL_WITH_VALUE
    return False


def process_detail_reader(command: str) -> str | None:
    """The first program the line starts that reads other processes' /proc details, or None:
    lsof and fuser always, ss and netstat with -p (in a bundle of short options or long)."""
    words = _words(command)
    for index in _commands(words):
        name = _name(words[index])
        if name in ("lsof", "fuser"):
            return name
        if name not in ("ss", "netstat"):
            continue
        for option in words[index + 1 :]:
            if option in _SEPARATORS:
                break
            if option in ("--processes", "--program") or (
                option[:1] == "-" and option[1:2] != "-" and "p" in option
            ):
                return name
    return None


def _words(command: str) -> list[str]:
    """Shell words and operators; unparseable text word by word (a name in it is still found:
    unknown raises)."""
    try:
        lexer = shlex.shlex(command, posix=True, punctuation_chars=";&|()")
        lexer.whitespace_split = True
        return list(lexer)
    except ValueError:
        return command.replace(";", " ; ").split()


def _name(word: str) -> str:
    return word.lstrip("$(`").rsplit("/", 1)[-1]


def _commands(words: list[str]) -> list[int]:
    """Indices of the words that start a command: after an operator or a command
    substitution's opening, past prefixes (sudo -n, timeout N, VAR=value)."""
    found, at_command = [], True
    for index, word in enumerate(words):
        if word in _SEPARATORS:
            at_command = True
            continue
        if word.startswith(("$(", "`")):
            at_command = True
        if not at_command:
            continue
        name = _name(word)
        if name in _PREFIXES or "=" in word or name.isdigit() or not name:
            continue
        found.append(index)
        at_command = False
    return found
