"""Which names mean a secret, and which values under such a name are not one.

A name is read as words (`HF_TOKEN`, `hf-token`, `hfToken`, `PGPASSWORD`, `client-key-data`
are all read word by word) and judged by its last words, so `max_tokens`, `tokenizer`, `author`
or `monkey` stay ordinary:
- *secret* names hold a secret whatever the value looks like (`password`, `token`, `secret`,
  `api_key`, `AccountKey`, `authkey`, `PGPASSWORD`), except a placeholder (`None`, `null`,
  `$VAR`, `<your-token>`) or, for `PWD`/`OLDPWD`, a path (the shell's folder, not ODBC's `PWD=`);
- *key-like* names (`key`, `--key`, `ssh_key`, `sig`) hold a secret only when the value looks
  like one (long, no path, no label such as `nvidia.com/gpu`, not a plain word);
- a tokenizer's special tokens (`eos_token`, `pad_token`: their values are `<|im_end|>`) are not
  secrets;
- a system error message is not a secret: programs (and Scout) print what failed, a colon, then
  the C library's words for the error (`open token: Permission denied`, `aurora@a's password:
  Permission denied, please try again.`, `cannot use ~/.scout/token: permission denied`).
"""

from __future__ import annotations

import errno
import os
import re

MASK = "[REDACTED]"  # what every masked secret reads as
# The last word of a name that always holds a secret.
SECRET_WORDS = frozenset({
    "password", "passwd", "passphrase", "pass", "pwd", "secret", "token", "credential",
    "credentials", "apikey", "authtoken", "authkey", "auth", "passcode", "privatekey",
    "accesskey", "secretkey", "accountkey", "sharedkey", "masterkey", "dockerconfigjson",
})  # fmt: skip
# A name ending in one of these glued on (no separator): PGPASSWORD, MYSQLPWD, dbSecret.
GLUED_ENDINGS = ("password", "passwd", "passphrase", "secret", "token", "apikey", "secretkey",
                 "accountkey", "accesskey", "privatekey")  # fmt: skip
# `<word> key` that always holds a secret: api key, access key, account key (Azure), …
SECRET_KEY_KINDS = frozenset({
    "api", "access", "secret", "private", "account", "shared", "master", "signing", "encryption",
    "session", "storage", "subscription", "auth", "license", "webhook", "hmac", "consumer",
    "ingest", "decryption",
})  # fmt: skip
# Words after which a `key`/`token` word is no secret: tokenizer special tokens, ids, paths.
NOT_SECRET_BEFORE_TOKEN = frozenset({
    "eos", "bos", "pad", "unk", "sep", "cls", "mask", "special", "additional", "start", "end",
    "image", "video", "audio", "vision", "think", "tool", "im", "eot", "eom", "fim", "begin",
    "bot", "eoi", "boi", "prefix", "suffix", "middle", "default", "decoder", "added", "max",
    "num", "min", "sort", "cache",
})  # fmt: skip
# Words that make a name a reference to a secret (Helm's existingSecret), not the secret.
REFERENCE_WORDS = frozenset({"existing"})
# Last words that say the name holds the secret itself: SECRET_KEY_BASE, api_token_value.
HOLDING_WORDS = frozenset({"base", "value", "data", "string", "material", "hash", "b64", "raw",
                           "base64", "plain", "plaintext", "bytes", "hex", "encoded"})  # fmt: skip
KEY_LIKE_WORDS = frozenset({"key", "sig", "keydata"})
# A `signature` that is a request's secret (X-Amz-Signature=, X-Goog-Signature=), not rpm's.
SIGNED_BY = frozenset({"amz", "goog", "sas", "hmac", "request", "url", "webhook"})
SHELL_FOLDER_NAMES = frozenset({"pwd", "oldpwd"})

_WORDS = re.compile(r"[A-Z]+[0-9]*(?![a-z])|[A-Z]?[a-z]+[0-9]*|[0-9]+")
PLACEHOLDER = re.compile(
    r"(?i)(?:none|null|nil|true|false|undefined|n/?a|-|~|\*+|x{3,}|\.{3}|"
    r"\$\{?[A-Za-z_][A-Za-z0-9_]*\}?|\$\(.*\)|\$?\{\{.*|%\(?\w*\)?s|<[^<>]*>|\[REDACTED\])"
)
# A tokenizer's special token (`<|im_end|>`, `</s>`, `[CLS]`, `<pad>`): a vocabulary entry.
SPECIAL_TOKEN = re.compile(r"<\|?[^<>\s]{1,60}\|?>|\[[A-Za-z_]{2,20}\]|▁?<[^<>\s]{1,60}>")
PATH = re.compile(
    r"(?:/|~/|\./|\.\./|[A-Za-z]:\\)\S*|\S+\.(?:key|pem|crt|cer|p12|pfx|der|json|txt)"
)
# A label, host or reference made of lowercase words: nvidia.com/gpu, node-role.k8s.io/master.
LABEL = re.compile(
    r"[a-z0-9]+(?:[._/-][a-z0-9]+)*(?:\.[a-z]{2,})(?:/[\w.-]+)*|[a-z]+(?:[-_][a-z0-9]+)*"
)
NUMBERS = re.compile(r"[0-9.:,_-]+|0x[0-9a-fA-F]+")  # counts, addresses, versions, hex
SECRET_SHAPE = re.compile(r"[A-Za-z0-9+/=_\-.~%]{8,}")
# The C library's message for every errno, longest first, as a whole phrase (optionally quoted).
_ERROR_TEXTS = sorted({os.strerror(code) for code in errno.errorcode}, key=len, reverse=True)
SYSTEM_ERROR = re.compile(rf"(?i)[\"']?(?:{'|'.join(map(re.escape, _ERROR_TEXTS))})(?![\w\-])")


def name_words(name: str) -> list[str]:
    """`--hf-token` → [hf, token]; `AccountKey` → [account, key]; `PGPASSWORD` → [pgpassword];
    a number ending a word is no word of its own (`KEY2` → key, `_B64` → b64)."""
    words = [word.lower() for word in _WORDS.findall(name)]
    return [w if w in HOLDING_WORDS else re.sub(r"(?<=[a-z])[0-9]+$", "", w) for w in words]


def name_kind(name: str) -> str | None:
    """The kind of name: "secret", "key-like", "shell-folder" (`PWD`) or None (no secret)."""
    words = name_words(name)
    if not words:
        return None
    while len(words) > 1 and (words[-1] in HOLDING_WORDS or words[-1].isdigit()):
        words = words[:-1]  # client-key-data is client-key; SECRET_KEY_BASE is SECRET_KEY
    last, before = words[-1], words[-2] if len(words) > 1 else ""
    if (
        last in ("token", "key") and before in NOT_SECRET_BEFORE_TOKEN
    ) or before in REFERENCE_WORDS:
        return None
    if last in SHELL_FOLDER_NAMES and len(words) == 1:
        return "shell-folder"
    if last == "key":
        return "secret" if before in SECRET_KEY_KINDS else "key-like"
    if last in SECRET_WORDS or last.endswith(GLUED_ENDINGS):
        return "secret"
    if last in KEY_LIKE_WORDS or (last == "signature" and before in SIGNED_BY):
        return "key-like"
    return None


def looks_secret(value: str) -> bool:
    """A value shaped like key material rather than a path, a label, a number or a word."""
    classes = sum(bool(re.search(c, value)) for c in ("[a-z]", "[A-Z]", "[0-9]"))
    return bool(
        classes >= 2
        and SECRET_SHAPE.fullmatch(value)
        and not value.startswith("-")
        and not PATH.fullmatch(value)
        and not LABEL.fullmatch(value)
        and not NUMBERS.fullmatch(value)
    )


def system_error_at(text: str, pos: int) -> bool:
    """Whether `text` at `pos` (where a value starts) is a system error message."""
    return SYSTEM_ERROR.match(text, pos) is not None


def not_a_secret(value: str) -> bool:
    """Values that hold no secret under any name: empty, a placeholder, a special token."""
    bare = value.strip()
    return not bare or bool(PLACEHOLDER.fullmatch(bare) or SPECIAL_TOKEN.fullmatch(bare))


def holds_secret(name: str, value: str) -> bool:
    """Whether `name = value` (an assignment, option, JSON or YAML pair) carries a secret."""
    kind = name_kind(name)
    if kind is None or not_a_secret(value):
        return False
    if kind == "shell-folder":
        return not PATH.fullmatch(value.strip())
    if kind == "key-like":
        return looks_secret(value.strip().removeprefix("base64:"))
    return True
