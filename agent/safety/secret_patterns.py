"""Secrets known by where they stand: after a secret name, in a URL, after a login, in a header.

Each rule finds a candidate and masks its value group (`val`) when `decide` agrees; a candidate
it declines is read again from its value on, so `--from-literal=password=x` still finds the
inner `password=`. Names are judged by `secret_names` (words, not substrings), so a rule never
needs a list of variable names. The classes, in the order they run:
- URL userinfo: `scheme://user:pass@host` (a password may hold `/`; the user may be empty) and a
  token standing as the user;
- a secret name and its value: `NAME=v`, `name: v` (YAML, headers; on a line of its own the
  value runs to the line's end, never past it), `"name": "v"` (JSON, also escaped inside JSON),
  `--name=v`, `--name v`, `set NAME v` as `aws configure set`, `npm config set`, `vastai set`
  write them, `<password>v</password>`, and YAML block scalars under a secret name;
- a bare secret word before a value shaped like a key (`AUTH hunter2secret`, `token 0f3a…`);
- the positional arguments of `login`/`auth` commands (`wandb login KEY`, `vault login TOKEN`)
  when shaped like a secret (a registry, URL or user name is not);
- `Authorization:` and `Bearer`/`Basic` credentials, cookies, a JSON Web Key's private members;
- program-specific forms: `-p` of logins and of mysql, `sshpass -p`, `ldap* -w`, `smbclient -U
  user%pass`, `redis-cli -a`/`AUTH`, `curl -u user:pass`, netrc's `password`, `htpasswd -b`,
  webhook URLs.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass

from agent.safety.secret_names import (
    LABEL,
    MASK,
    holds_secret,
    looks_secret,
    name_kind,
    not_a_secret,
    system_error_at,
)

Decide = Callable[[re.Match[str]], bool]
STEMS = ("pass", "pwd", "secret", "token", "key", "auth", "cred", "sig", "dockerconfig")
_STEM = rf"(?=[A-Za-z0-9_.\-/:]*?(?i:{'|'.join(STEMS)}))"
_NAME = r"[A-Za-z_./][A-Za-z0-9_.\-/]*+"
_SETTING = r"[A-Za-z_./:][A-Za-z0-9_.\-/:]*+"  # npm's `//registry.npmjs.org/:_authToken`
_VALUE = (
    r"(?P<val>\\\"(?:(?!\\\")[^\n])*\\\"|\"(?:\\.|[^\"\\\n])*\"|'[^'\n]*'|\$\([^()\n]*\)"
    r"|[^\s'\",;&|}{\[][^\s'\",;&|}]*)"
)
_OPTION_VALUE = r"(?P<val>\"(?:\\.|[^\"\\\n])*\"|'[^'\n]*'|(?!-)[^\s;&|]+)"


@dataclass(frozen=True)
class Rule:
    """A candidate pattern with a `val` group, masked where `decide` says it holds a secret;
    or, with `rewrite`, a match rewritten whole (for forms with several secrets)."""

    pattern: re.Pattern[str]
    decide: Decide
    rewrite: Callable[[re.Match[str]], str] | None = None
    needs: tuple[str, ...] = ()  # lowercase words, one of which every masking match holds

    def apply(self, text: str) -> str:
        if self.rewrite is not None:
            return self.pattern.sub(self.rewrite, text)
        out: list[str] = []
        pos = 0
        while (m := self.pattern.search(text, pos)) is not None:
            if m["val"] is None or m["val"].startswith(MASK) or not self.decide(m):
                resume = m.start("val") if m["val"] is not None else m.start()
                out.append(text[pos : max(resume, m.start() + 1)])
                pos = max(resume, m.start() + 1)
                continue
            out += [text[pos : m.start("val")], _masked(m["val"])]
            pos = m.end("val")
        out.append(text[pos:])
        return "".join(out)


def _masked(value: str) -> str:
    for quote in ('\\"', '"', "'"):
        if len(value) >= 2 * len(quote) and value.startswith(quote) and value.endswith(quote):
            return f"{quote}{MASK}{quote}"
    return MASK


def _unquoted(value: str) -> str:
    for quote in ('\\"', '"', "'"):
        if len(value) >= 2 * len(quote) and value.startswith(quote) and value.endswith(quote):
            return value[len(quote) : -len(quote)]
    return value


def _named(m: re.Match[str]) -> bool:
    return holds_secret(m["name"], _unquoted(m["val"])) and not _error_message(m)


def _shaped(m: re.Match[str]) -> bool:
    return name_kind(m["name"]) is not None and looks_secret(m["val"]) and not _error_message(m)


def _error_message(m: re.Match[str]) -> bool:
    """`token: Permission denied`: the value is where a program said what went wrong (read on
    from the value's start, as a value group may hold only its first word)."""
    return system_error_at(m.string, m.start("val"))


def _always(m: re.Match[str]) -> bool:
    return not not_a_secret(_unquoted(m["val"]))


def _url_password(m: re.Match[str]) -> bool:
    """`host:8000/path@v2` is a port and a path, not a user and a password."""
    return not re.fullmatch(r"\d{1,5}(?:[/?#].*)?", m["val"], re.S)


def _credential(m: re.Match[str]) -> bool:
    """A credential after `Bearer`; a plain word there is prose (`Bearer authentication`)."""
    return not not_a_secret(m["val"]) and not LABEL.fullmatch(m["val"])


_LOGIN_WORD_SKIPS = frozenset({"-u", "--username", "--user", "-e", "--email", "--host",
                               "--server", "--region", "--profile", "-a", "--address", "-n",
                               "--namespace", "--method", "--path"})  # fmt: skip


def _login_positionals(m: re.Match[str]) -> str:
    """A login's arguments that are secrets: not options or their values, shaped like a key."""
    parts = re.split(r"([ \t]+)", m["args"])
    for i in range(0, len(parts), 2):
        word, previous = parts[i], parts[i - 2] if i >= 2 else ""
        if previous not in _LOGIN_WORD_SKIPS and "=" not in word and looks_secret(word):
            parts[i] = MASK
    return m["verb"] + "".join(parts)


def _cookie_values(m: re.Match[str]) -> str:
    """Every cookie's value (Set-Cookie: only the first pair; the rest are attributes)."""
    pairs = m["pairs"].split(";")
    for i, pair in enumerate(pairs[:1] if m["set"] else pairs):
        name, sep, value = pair.partition("=")
        if sep and value.strip() and not not_a_secret(value):
            pairs[i] = f"{name}={MASK}"
    return m["head"] + ";".join(pairs)


def _in_jwk(m: re.Match[str]) -> bool:
    return '"kty"' in m.string[max(0, m.start() - 4000) : m.end() + 4000]


def _rule(pattern: str, decide: Decide = _always, needs: tuple[str, ...] = ()) -> Rule:
    """A rule on a secret name's stem needs one of `STEMS`; others name their words."""
    return Rule(re.compile(pattern), decide, needs=STEMS if _STEM in pattern else needs)


def apply_rules(text: str) -> str:
    """Every rule in order, but on ASCII text a rule whose words are all absent is skipped
    unread: a megabyte of output costs one lowering and a few word searches, not a scan per
    rule. Masking writes only MASK, bracketed, so it never makes a word a later rule needs.
    Other text runs every rule: `lower` misses the case folding the patterns match (long s)."""
    lowered = text.lower() if text.isascii() else None
    held = {word for word in _WORDS if lowered is None or word in lowered}
    for rule in RULES:
        if not rule.needs or held.intersection(rule.needs):
            text = rule.apply(text)
    return text


_SCHEME = r"(?<![A-Za-z0-9+.\-])[a-zA-Z][a-zA-Z0-9+.\-]*://"
RULES: list[Rule] = [
    # URL userinfo: a password (which may hold '/') or a token standing as the user.
    _rule(rf"{_SCHEME}[^:/?#\s@'\"<>]*:(?P<val>[^\s'\"@<>]+)@(?=[\w\[])", _url_password, ("://",)),
    _rule(
        rf"{_SCHEME}(?P<val>[^:/?#\s@'\"<>]{{20,}})@(?=[\w\[])",
        lambda m: looks_secret(m["val"]),
        ("://",),
    ),
    # Webhook URLs carry their secret in the path.
    _rule(
        r"https://(?:hooks\.slack\.com|discord(?:app)?\.com/api/webhooks)/(?P<val>[\w/\-]+)",
        needs=("https://",),
    ),
    # A YAML block scalar under a secret name: its indented lines.
    _rule(
        rf"(?m)^(?P<indent>[ \t]*)[\"']?(?P<name>{_STEM}{_NAME})[\"']?[ \t]*:[ \t]*[|>][-+0-9]*"
        r"[ \t]*\r?\n(?P<val>(?:(?P=indent)[ \t]+\S[^\n]*(?:\n|\Z))+)",
        lambda m: name_kind(m["name"]) is not None,
    ),
    # A YAML or ini line `name: v w` / `name = v w`: an unquoted value runs to the line's end.
    _rule(
        rf"(?m)^[ \t]*(?:-[ \t]+)?(?P<name>{_STEM}{_NAME})(?:[ \t]*:|[ \t]*=)[ \t]+"
        r"(?P<val>[^\s\"'#|>{\[&*!][^\n]*?)(?=[ \t]*(?:\r?$|[ \t]#))",
        _named,
    ),
    # NAME=v, name: v, "name": "v", \"name\": \"v\", --name=v (never past the end of a line).
    _rule(
        rf"(?<![A-Za-z0-9_.\-])(?P<q>\\?[\"']?)(?P<name>(?:--?)?{_STEM}{_NAME})(?P=q)"
        rf"(?:[ \t]*:[ \t]*|=|[ \t]+=[ \t]*){_VALUE}",
        _named,
    ),
    # <password>v</password> (Maven settings, XML configs); a plist's <key> names, it holds nothing.
    _rule(
        rf"<(?P<name>{_STEM}[A-Za-z_][\w.\-]*+)>(?P<val>[^<\n]+)</(?P=name)>",
        lambda m: name_kind(m["name"]) == "secret" and _named(m),
    ),
    # --name value
    _rule(rf"(?<![\w.\-])(?P<name>--?{_STEM}[A-Za-z][\w.\-]*+)[ \t]+{_OPTION_VALUE}", _named),
    # set NAME value (aws configure set, npm/yarn/git config set, vastai set api-key)
    _rule(
        rf"(?i)\b(?:set|add|put|config(?:[ \t]+--[\w-]+)*)[ \t]+(?P<name>{_STEM}{_SETTING})"
        rf"[ \t]+{_OPTION_VALUE}",
        _named,
    ),
    # A bare secret word before a key-shaped value: AUTH s3cretPassw0rd, add-authtoken 2b3c…
    _rule(
        rf"(?<![\w.\-/:$=])(?P<name>{_STEM}[A-Za-z_][\w.\-]*+)[ \t]+(?P<val>[^\s'\"<>;&|]{{8,}})",
        _shaped,
    ),
    # The positional arguments of a login: wandb login KEY, vault login TOKEN.
    Rule(
        re.compile(r"(?P<verb>\b(?:login|auth)\b)(?P<args>[^\S\n]+[^\n;&|]*)"),
        _always,
        _login_positionals,
        ("login", "auth"),
    ),
    # Authorization headers and their schemes.
    _rule(
        r"(?i)\b(?:bearer|basic)[ \t]+(?P<val>[A-Za-z0-9._~+/=\-]{8,})",
        _credential,
        ("bearer", "basic"),
    ),
    _rule(
        r"(?i)\b(?:proxy-)?authorization[\"']?[ \t]*[:=][ \t]*[\"']?(?:[A-Za-z]+[ \t]+)?"
        r"(?P<val>[^\s'\",]{8,})",
        needs=("authorization",),
    ),
    # Cookies carry sessions: every value of a Cookie or Set-Cookie header.
    Rule(
        re.compile(r"(?im)^(?P<head>[ \t]*(?P<set>set-)?cookie[ \t]*:)(?P<pairs>[^\n]*)"),
        _always,
        _cookie_values,
        ("cookie",),
    ),
    # The private members of a JSON Web Key (d, p, q, dp, dq, qi; k of a symmetric key).
    _rule(
        r'"(?:d|p|q|dp|dq|qi|k)"[ \t]*:[ \t]*(?P<val>"[A-Za-z0-9_\-]{16,}")', _in_jwk, ('"kty"',)
    ),
    # Program-specific password arguments.
    _rule(
        r"(?i)\b(?:mysql\w*|mariadb[\w\-]*)(?:[ \t]+[^\s|;&]+){0,12}?[ \t]+-p(?P<val>[^\s\-]\S*)",
        needs=("mysql", "mariadb"),
    ),
    _rule(r"\blogin\b(?:[ \t]+[^\s|;&]+){0,12}?[ \t]+-p[ \t]*(?P<val>[^\s;&|]+)", needs=("login",)),
    _rule(r"\bsshpass[ \t]+-p[ \t]*(?P<val>\S+)", needs=("sshpass",)),
    _rule(
        r"\bldap\w+\b(?:[ \t]+[^\s|;&]+){0,12}?[ \t]+-w[ \t]*(?P<val>[^\s;&|]+)", needs=("ldap",)
    ),
    _rule(
        r"\b(?:smb\w*|rpcclient|mount\.cifs)\b[^\n;&|]*?[ \t]-U[ \t]*[^%\s]+%(?P<val>\S+)",
        needs=("smb", "rpcclient", "mount.cifs"),
    ),
    _rule(
        r"\bredis-cli\b(?:[ \t]+[^\s|;&]+){0,12}?[ \t]+-a[ \t]+(?P<val>\S+)", needs=("redis-cli",)
    ),
    _rule(
        r"\bredis-cli\b[^\n;&|]*?\bAUTH[ \t]+(?:[^\s;&|]+[ \t]+)?(?P<val>[^\s;&|]+)",
        needs=("redis-cli",),
    ),
    # `-u`, lowered, is in `-U`, `--user` and `--proxy-user` too
    _rule(
        r"(?:[ \t]-[uU][ \t]*|--(?:proxy-)?user[= \t])[^:\s'\"]*:(?P<val>[^\s'\"]+)",
        needs=("-u",),
    ),
    _rule(
        r"(?i)\b(?:machine[ \t]+\S+|default)(?:\s+(?:login|account|port)\s+\S+)*"
        r"\s+password\s+(?P<val>\S+)",
        needs=("password",),
    ),
    _rule(
        r"\bhtpasswd[ \t]+(?:-\w+[ \t]+)*?-\w*b\w*[ \t]+(?:-\w+[ \t]+)*\S+[ \t]+\S+[ \t]+"
        r"(?P<val>\S+)",
        needs=("htpasswd",),
    ),
]
_WORDS = frozenset(word for rule in RULES for word in rule.needs)
