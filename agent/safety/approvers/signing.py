"""HMAC signatures for the approval webhook, GitHub-style, checked in constant time.

Every message either way carries `X-Scout-Timestamp` (unix seconds) and `X-Scout-Signature-256:
sha256=<hex HMAC-SHA256(secret, "<timestamp>.<body>")>`, body being the exact bytes sent. The
timestamp is plain decimal digits with no leading zero, so one signed message has one spelling. A
delivery is accepted once: a fresh timestamp (within the tolerance) and a signature never seen
before, so a captured approval cannot be replayed later or for another step. Checking and
remembering are separate steps, so a message that is turned away for another reason (no step is
waiting for it, it answers another step) is not used up.
"""

from __future__ import annotations

import hashlib
import hmac
import time
from collections.abc import Callable, Mapping

TIMESTAMP_HEADER = "X-Scout-Timestamp"
SIGNATURE_HEADER = "X-Scout-Signature-256"
DELIVERY_HEADER = "X-Scout-Delivery"
SIGNATURE_PREFIX = "sha256="
DEFAULT_TOLERANCE_S = 300
MIN_SECRET_CHARS = 32
Delivery = tuple[int, str]


class SignatureError(Exception):
    """A message whose signature, timestamp or headers cannot be trusted; never a decision."""


class ReplayedDelivery(SignatureError):
    """A correctly signed message that was already accepted once."""


def signature(secret: bytes, timestamp: int, body: bytes) -> str:
    """The header value for `body` sent at `timestamp`."""
    digest = hmac.new(secret, str(timestamp).encode() + b"." + body, hashlib.sha256).hexdigest()
    return SIGNATURE_PREFIX + digest


def signed_headers(
    secret: bytes, body: bytes, timestamp: int, delivery: str | None = None
) -> dict[str, str]:
    """Headers that authenticate `body`; `delivery` names the request for the receiver's logs."""
    headers = {
        TIMESTAMP_HEADER: str(timestamp),
        SIGNATURE_HEADER: signature(secret, timestamp, body),
    }
    if delivery is not None:
        headers[DELIVERY_HEADER] = delivery
    return headers


def parse_timestamp(raw: str) -> int:
    """The unix seconds of a timestamp header: ASCII digits, no sign, no leading zero."""
    text = raw.strip()
    if not (text.isascii() and text.isdigit()) or (len(text) > 1 and text[0] == "0"):
        raise SignatureError(f"malformed {TIMESTAMP_HEADER} header (expected unix seconds)")
    return int(text)


def check_secret(secret: str) -> None:
    """Refuse a shared secret too short to keep signatures from being guessed."""
    if len(secret) < MIN_SECRET_CHARS:
        what = "empty" if not secret else f"only {len(secret)} characters"
        raise ValueError(
            f"the approval webhook secret is {what}; use a random secret of at least "
            f'{MIN_SECRET_CHARS} characters, e.g. "$(openssl rand -hex 32)" (the receiver must '
            "use the same one)"
        )


class DeliveryVerifier:
    """Checks signature, freshness and uniqueness of messages signed with one shared secret.

    `headers` may be any mapping whose `get` finds lower-case names (httpx headers, or a dict the
    caller lower-cased). Accepted deliveries are remembered until their timestamp falls out of
    the tolerance window, after which the freshness check alone rejects them.
    """

    def __init__(
        self,
        secret: bytes,
        *,
        clock: Callable[[], float] = time.time,
        tolerance_s: int = DEFAULT_TOLERANCE_S,
    ) -> None:
        self._secret = secret
        self._clock = clock
        self._tolerance_s = tolerance_s
        self._seen: dict[tuple[int, str], int] = {}

    def __repr__(self) -> str:
        return f"DeliveryVerifier(tolerance_s={self._tolerance_s}, seen={len(self._seen)})"

    def verify(self, headers: Mapping[str, str], body: bytes) -> None:
        """Raise SignatureError (or ReplayedDelivery) unless this message may be trusted; a
        trusted message is remembered, so it is never accepted again."""
        self.accept(self.check(headers, body))

    def check(self, headers: Mapping[str, str], body: bytes) -> Delivery:
        """The delivery, if this message may be trusted (else SignatureError or
        ReplayedDelivery); nothing is remembered until `accept`."""
        raw_timestamp = headers.get(TIMESTAMP_HEADER.lower())
        sent = headers.get(SIGNATURE_HEADER.lower())
        if raw_timestamp is None or sent is None:
            raise SignatureError(
                f"unsigned message (missing {TIMESTAMP_HEADER} or {SIGNATURE_HEADER})"
            )
        timestamp = parse_timestamp(raw_timestamp)
        expected = signature(self._secret, timestamp, body)
        if not hmac.compare_digest(expected.encode(), sent.strip().encode()):
            raise SignatureError("bad signature (wrong secret or altered body)")
        now = self._clock()
        if abs(now - timestamp) > self._tolerance_s:
            skew = f"{int(now - timestamp)} s old" if now > timestamp else "from the future"
            raise SignatureError(
                f"stale timestamp ({skew}; limit ±{self._tolerance_s} s — check both clocks)"
            )
        self._forget_expired(now)
        delivery = (timestamp, expected)
        if delivery in self._seen:
            raise ReplayedDelivery("replayed delivery (this signed message was already used)")
        return delivery

    def accept(self, delivery: Delivery) -> None:
        """Use up a checked delivery: it is never accepted again."""
        if delivery in self._seen:
            raise ReplayedDelivery("replayed delivery (this signed message was already used)")
        self._seen[delivery] = delivery[0]

    def _forget_expired(self, now: float) -> None:
        expired = [key for key, ts in self._seen.items() if now - ts > self._tolerance_s]
        for key in expired:
            del self._seen[key]
