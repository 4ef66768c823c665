"""The shapes secrets take, as (pattern, replacement) pairs applied in order by the Redactor.

Blocks come first (private keys, including a body whose BEGIN line was cut off by output
truncation), then tokens recognisable by their prefix, then secrets recognisable by their name:
`NAME=value` where the name ends in a secret word (`HF_TOKEN`, `DB_PASS`, `client_secret`), JSON
`"name": "value"` pairs, and command-line options (`--password X`, `-pX` for mysql, `docker
login -p X`, `curl -u user:pass`). Names are matched as whole words, so `max_tokens`,
`tokenizer` or `monkey` are left alone.
"""

from __future__ import annotations

import re
from collections.abc import Callable

MASK = "[REDACTED]"
Replacement = str | Callable[[re.Match[str]], str]
_NOT_MASKED = r"(?!\[REDACTED\])"
# The last word of a secret-looking name: HF_TOKEN, DB_PASS, AWS_SECRET_ACCESS_KEY, api-key.
_SECRET_WORD = (
    r"(?:password|passwd|passphrase|pass|pwd|secret|token|api[_-]?key|apikey|access[_-]?key"
    r"|secret[_-]?key|private[_-]?key|key|credentials?|auth|authtoken)"
)
_SECRET_NAME = rf"(?:[A-Za-z0-9]+[_.-])*{_SECRET_WORD}"
_SECRET_KEY_NAME = (
    rf"(?:{_SECRET_NAME}|secretaccesskey|sessiontoken|identitytoken|registrytoken|accesstoken"
    r"|refreshtoken|clientsecret|privatekey)"
)
SECRET_KEY = re.compile(rf"(?i){_SECRET_KEY_NAME}")

_BLOCKS: list[tuple[str, str]] = [
    (
        r"-----BEGIN ([A-Z0-9 ]*)PRIVATE KEY( BLOCK)?-----.*?"
        r"(?:-----END \1PRIVATE KEY\2-----|\Z)",
        rf"-----BEGIN \1PRIVATE KEY\2----- {MASK} -----END \1PRIVATE KEY\2-----",
    ),
    (  # the body of a key whose BEGIN line was cut off: base64 lines, then the END line
        r"(?m)(?:^|(?<=\\n))(?:[A-Za-z0-9+/=]{16,}(?:\\n|\r?\n))+[A-Za-z0-9+/=]*(?:\\n|\r?\n)?"
        r"(?=-----END [A-Z0-9 ]*PRIVATE KEY( BLOCK)?-----)",
        f"{MASK}\n",
    ),
]
_TOKENS: list[str] = [
    r"\bsk-ant-[A-Za-z0-9_\-]{8,}",  # Anthropic
    r"\bsk-[A-Za-z0-9_\-]{20,}",  # OpenAI (sk-…, sk-proj-…)
    r"\b(?:sk|rk|pk)_(?:live|test)_[A-Za-z0-9]{16,}",  # Stripe-style
    r"\bhf_[A-Za-z0-9]{16,}",  # Hugging Face
    r"\bnvapi-[A-Za-z0-9_\-]{16,}",  # NVIDIA NGC
    r"\bgh[pousr]_[A-Za-z0-9]{20,}",  # GitHub
    r"\bgithub_pat_[A-Za-z0-9_]{20,}",  # GitHub fine-grained
    r"\bgl(?:pat|dt|rt|ptt|cbt|oas|soat|ft|imt|agent)-[A-Za-z0-9_\-]{16,}",  # GitLab
    r"\b(?:AKIA|ASIA|AROA|AIDA|ANPA|AGPA|AIPA|ANVA|ASCA)[A-Z0-9]{16}\b",  # AWS key ids
    r"\bAIza[0-9A-Za-z_\-]{35}",  # GCP API key
    r"\bya29\.[0-9A-Za-z_\-]{20,}",  # GCP OAuth access token
    r"\bxox[abeprs]-[A-Za-z0-9\-]{10,}",  # Slack
    r"\bxapp-[A-Za-z0-9\-]{10,}",  # Slack app-level
    r"\bnpm_[A-Za-z0-9]{30,}",  # npm
    r"\bpypi-[A-Za-z0-9_\-]{40,}",  # PyPI
    r"\beyJ[A-Za-z0-9_\-]{8,}\.[A-Za-z0-9_\-]{8,}\.[A-Za-z0-9_\-]{8,}",  # JWT
    r"\$(?:1|2[abxy]?|5|6|y|gy|7|sha1|md5|argon2(?:id|i|d))\$[A-Za-z0-9./+=$,\-]{8,}",  # crypt
]
_PAIRS: list[tuple[str, Replacement]] = [
    (  # webhook URLs carry their secret in the path
        r"(https://(?:hooks\.slack\.com|discord(?:app)?\.com/api/webhooks))/[A-Za-z0-9/_\-]+",
        rf"\1/{MASK}",
    ),
    (r"(?i)\b(bearer|basic|token)\s+[A-Za-z0-9._~+/=\-]{8,}", rf"\1 {MASK}"),
    (
        r"(?i)\b(x-api-key|authorization|x-auth-token|private-token)(\s*[=:]\s*)"
        r"(?!bearer\b|basic\b|token\b)[^\s'\"]{8,}",
        rf"\1\2{MASK}",
    ),
    (  # a scheme starts only where a run of scheme characters starts: one scan, not one per letter
        r"(?<![a-zA-Z0-9+.\-])([a-zA-Z][a-zA-Z0-9+.\-]*://[^:/\s@'\"]+:)[^@\s/'\"]+@",
        rf"\1{MASK}@",
    ),
    (  # NAME=value, NAME: value, "name": "value" (JSON, docker config "auth"), --name=value
        rf"(?i)(?<![A-Za-z0-9_.\-])((?:--?)?{_SECRET_KEY_NAME}['\"]?\s*[=:]\s*)(?:(\")"
        rf"{_NOT_MASKED}(?:\\.|[^\"\\\n])+\"|(')[^'\n]+'|{_NOT_MASKED}[^\s'\",;&|}}]+)",
        lambda m: f"{m[1]}{m[2] or m[3] or ''}{MASK}{m[2] or m[3] or ''}",
    ),
    (  # --password X, --token X (a value that is not the next option)
        rf"(?i)(?<![A-Za-z0-9_.\-])(--?{_SECRET_NAME}\s+){_NOT_MASKED}(?!-)[^\s;&|]+",
        rf"\1{MASK}",
    ),
    (  # mysql family: -pSECRET (attached) and docker/podman/helm login -p SECRET
        r"(?i)(\b(?:mysql\w*|mariadb[\w\-]*)(?:\s+[^\s|;&]+){0,12}?\s+-p)(?!\[REDACTED\])[^\s\-]\S*",
        rf"\1{MASK}",
    ),
    (
        r"(?i)(\b(?:docker|podman|nerdctl|helm|oras|skopeo|buildah)(?:\s+[^\s|;&]+){0,6}?"
        r"\s+login\b(?:\s+[^\s|;&]+){0,12}?\s+-p\s*)(?!\[REDACTED\])\S+",
        rf"\1{MASK}",
    ),
    (r"(\bsshpass\s+-p\s*)(?!\[REDACTED\])\S+", rf"\1{MASK}"),
    (r"(\bredis-cli(?:\s+[^\s|;&]+){0,12}?\s+-a\s+)(?!\[REDACTED\])\S+", rf"\1{MASK}"),
    (r"((?:\s-u\s*|--user[=\s])[^:\s'\"]+:)(?!\[REDACTED\])[^\s'\"]+", rf"\1{MASK}"),
    (  # netrc: machine … login … password SECRET
        r"(?im)((?:^|\blogin\s+\S+\s+)\s*(?:password|passwd)\s+)(?!\[REDACTED\])\S+",
        rf"\1{MASK}",
    ),
]

PATTERNS: list[tuple[re.Pattern[str], Replacement]] = [
    *((re.compile(p, re.S), r) for p, r in _BLOCKS),
    *((re.compile(p), MASK) for p in _TOKENS),
    *((re.compile(p), r) for p, r in _PAIRS),
]
