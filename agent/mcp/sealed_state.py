"""The `requestState` Scout hands an MCP client with a URL-mode approval: sealed, bound, single use.

Where the client declares URL-mode elicitation, a call that waits for a person comes back as an
`InputRequiredResult` pointing at Scout's approval page, with a `requestState` the client echoes
on its retry. The specification calls that state attacker-controlled, so it is sealed with an
AEAD (AES-256-GCM, under a key that lives only in this server process) and carries what the
retry must match: the approval's id, the digest of the exact call, the principal, the expiry,
and a one-time id this server consumes on first sight. A state that does not open, has expired,
belongs to another call or principal, or was seen before is refused and nothing runs. Opening
a state only says which approval the client came back for; whether a person approved it is
still for Scout's approvers (agent/mcp/approvals.py), never for the client's "accept".
"""

from __future__ import annotations

import base64
import hashlib
import json
import os
import secrets
import time
from collections.abc import Callable
from typing import Any

from cryptography.exceptions import InvalidTag
from cryptography.hazmat.primitives.ciphers.aead import AESGCM

PREFIX = "s1."
#: bound under the tag, so a token of another format or purpose never opens as this one
ASSOCIATED = b"scout/mcp/request-state/v1"
NONCE_BYTES = 12


class StateRefused(Exception):
    """The state cannot be used; `str()` says why (for the transcript and the client)."""


def call_digest(tool: str, arguments: dict[str, Any]) -> str:
    """The call a state is bound to: the tool and its exact input, canonically."""
    canonical = json.dumps({"tool": tool, "input": arguments}, sort_keys=True, default=str)
    return hashlib.sha256(canonical.encode()).hexdigest()


class RequestStateSeal:
    def __init__(self, *, ttl_s: float, clock: Callable[[], float] = time.time) -> None:
        """A fresh key per server: a state outlives neither its ttl nor the process."""
        self._aead = AESGCM(AESGCM.generate_key(bit_length=256))
        self._ttl_s = ttl_s
        self._clock = clock
        self._seen: dict[str, float] = {}  # one-time id -> its expiry, kept until then

    def seal(self, *, approval_id: str, digest: str, principal: str) -> str:
        claims = {
            "approval_id": approval_id,
            "call": digest,
            "principal": principal,
            "expires_at": self._clock() + self._ttl_s,
            "once": secrets.token_hex(16),
        }
        nonce = os.urandom(NONCE_BYTES)
        sealed = self._aead.encrypt(nonce, json.dumps(claims).encode(), ASSOCIATED)
        return PREFIX + base64.urlsafe_b64encode(nonce + sealed).decode()

    def open(self, token: str, *, digest: str, principal: str) -> str:
        """The approval id `token` was sealed for, consumed now; StateRefused otherwise."""
        claims = self._unseal(token)
        now = self._clock()
        self._seen = {once: until for once, until in self._seen.items() if until > now}
        if not claims["expires_at"] > now:
            raise StateRefused("this requestState has expired")
        if claims["once"] in self._seen:
            raise StateRefused("this requestState was used already")
        self._seen[claims["once"]] = claims["expires_at"]
        if claims["principal"] != principal:
            raise StateRefused("this requestState was given to another principal")
        if claims["call"] != digest:
            raise StateRefused("this requestState was given for another call")
        return str(claims["approval_id"])

    def _unseal(self, token: str) -> dict[str, Any]:
        try:
            raw = base64.urlsafe_b64decode(token.removeprefix(PREFIX).encode())
            if not token.startswith(PREFIX) or len(raw) <= NONCE_BYTES:
                raise ValueError("malformed")
            plain = self._aead.decrypt(raw[:NONCE_BYTES], raw[NONCE_BYTES:], ASSOCIATED)
            claims = json.loads(plain)
        except (ValueError, InvalidTag):
            raise StateRefused("this requestState is not one this server sealed") from None
        expected = {"approval_id", "call", "principal", "expires_at", "once"}
        if not isinstance(claims, dict) or set(claims) != expected:
            raise StateRefused("this requestState is not one this server sealed")
        return claims
