"""Failures a fetch can meet; each message says what happened and what to do next."""

from __future__ import annotations


class WebFetchError(Exception):
    """A fetch that failed in a way the user (or the model) can act on; `str()` is the message."""


class BadURLError(WebFetchError):
    """The URL is not something web_fetch may fetch (scheme, missing host)."""


class RefusedError(WebFetchError):
    """The address guard refused the host: it points inside a private network or the machine."""


class ResolveError(WebFetchError):
    """The host name did not resolve."""


class ConnectFailure(WebFetchError):
    """No connection could be made to any address of the host."""


class TLSFailure(WebFetchError):
    """The TLS handshake or the certificate check failed."""


class FetchTimeout(WebFetchError):
    """The server did not answer in time."""


class HTTPStatusFailure(WebFetchError):
    """The server answered with a 4xx or 5xx status (or a 3xx that cannot be followed)."""

    def __init__(self, message: str, status: int) -> None:
        super().__init__(message)
        self.status = status


class RedirectError(WebFetchError):
    """Too many redirects, or a redirect to something that is not http(s)."""


class NotTextError(WebFetchError):
    """The response is an image, archive or other binary, not a page to read."""


class TooLargeError(WebFetchError):
    """The server announced a body far beyond anything worth reading."""
