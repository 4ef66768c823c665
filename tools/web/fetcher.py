"""Fetching one URL safely: every hop checked by the address guard, bodies capped, caches used.

Redirects are followed by hand so each new host is resolved and checked before anything connects
to it, and the connection goes to the address that was checked (the Host header and TLS SNI keep
the name), so a DNS answer that changes between check and connect cannot slip through.
"""

from __future__ import annotations

import asyncio
import ipaddress
import ssl
import time
from dataclasses import replace
from datetime import UTC, datetime
from http import HTTPStatus

import httpx

from tools.web.cache import DiskCache, SessionCache
from tools.web.decoding import ACCEPT_ENCODING, BoundedDecoder, DecodingError, content_codings
from tools.web.download import Download
from tools.web.errors import (
    BadURLError,
    ConnectFailure,
    FetchTimeout,
    HTTPStatusFailure,
    NotTextError,
    RedirectError,
    TLSFailure,
    TooLargeError,
)
from tools.web.page_reader import PageReader
from tools.web.settings import WebSettings, size_label
from tools.web.ssrf import AddressGuard, IPAddress, Resolver, system_resolve

REDIRECT_STATUSES = frozenset({301, 302, 303, 307, 308})
TEXT_MEDIA_TYPES = frozenset(
    {
        "application/json", "application/xml", "application/xhtml+xml", "application/javascript",
        "application/x-yaml", "application/yaml", "application/toml", "application/x-sh",
    }
)  # fmt: skip
ACCEPT = "text/html,application/xhtml+xml,text/markdown,text/plain,application/json;q=0.9,*/*;q=0.5"
MAX_ADDRESSES_TRIED = 3
CHUNK_BYTES = 64 * 1024
STATUS_HINTS = {
    401: "the page needs a login; find a public copy (a GitHub raw file, the docs repository)",
    403: "the site refuses this client; find a public copy (a GitHub raw file, the docs repo)",
    404: "the page does not exist; check the address, or look for the page's current location",
    410: "the page was removed; look for the page's current location",
    429: "the site is rate-limiting; wait a minute before fetching it again, or use another source",
}


class WebFetcher:
    """Fetches URLs for one session, and reads them into text through its page reader (worker
    processes); hold one per session (tools get it as `ctx.web`) and `aclose` it.

    `resolve` and `transport` exist for tests and special set-ups; the defaults use the system
    resolver and a direct httpx connection (environment proxies are ignored on purpose).
    """

    def __init__(
        self,
        settings: WebSettings | None = None,
        *,
        resolve: Resolver = system_resolve,
        transport: httpx.AsyncBaseTransport | None = None,
    ) -> None:
        self.settings = settings or WebSettings()
        self._guard = AddressGuard(self.settings.allowed_hosts, resolve)
        self._session_cache = SessionCache(self.settings.session_cache_ttl_s)
        self._disk_cache = DiskCache(self.settings.cache_dir) if self.settings.cache_dir else None
        self._transport = transport
        self._client: httpx.AsyncClient | None = None
        self.pages = PageReader(self.settings.read_deadline_s)

    async def __aenter__(self) -> WebFetcher:
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.aclose()

    async def aclose(self) -> None:
        await self.pages.aclose()
        if self._client is not None:
            await self._client.aclose()
            self._client = None

    def _http(self) -> httpx.AsyncClient:
        if self._client is None:
            s = self.settings
            self._client = httpx.AsyncClient(
                timeout=httpx.Timeout(s.read_timeout_s, connect=s.connect_timeout_s),
                # No keep-alive: connections are opened to pinned addresses, and a pooled one
                # must never carry a request for another name that shares the address.
                limits=httpx.Limits(max_keepalive_connections=0),
                follow_redirects=False,
                trust_env=False,
                transport=self._transport,
                headers={
                    "User-Agent": s.user_agent,
                    "Accept": ACCEPT,
                    "Accept-Encoding": ACCEPT_ENCODING,
                },
            )
        return self._client

    async def fetch(self, url: str) -> Download:
        """Follow `url` to its final response and read its body (up to the byte cap).

        Raises a WebFetchError whose message says what went wrong and what to do.
        """
        target = parse_url(url)
        key = str(target)
        cached = self._session_cache.get(key)
        if cached is not None:
            return cached
        started = time.monotonic()
        total = self.settings.total_timeout_s
        try:
            async with asyncio.timeout(total):
                download = await self._follow(target)
        except TimeoutError:
            raise FetchTimeout(
                f"no response within {total:g} s from {target.host} (whole fetch); the site is "
                "slow or unreachable, try again later or use another source"
            ) from None
        download = replace(download, url=key, duration_s=time.monotonic() - started)
        self._session_cache.put(key, download)
        return download

    async def _follow(self, url: httpx.URL) -> Download:
        hops: list[str] = []
        for _ in range(self.settings.max_redirects + 1):
            addresses = await self._guard.check(url)
            stored = self._disk_cache.load(str(url)) if self._disk_cache else None
            response = await self._send(url, addresses, stored)
            try:
                location = response.headers.get("location")
                if response.status_code in REDIRECT_STATUSES and location:
                    hops.append(str(url))
                    url = redirect_target(url, location)
                    continue
                return await self._finish(url, response, stored, tuple(hops))
            finally:
                await response.aclose()
        chain = " → ".join([*hops, str(url)])
        raise RedirectError(
            f"too many redirects (more than {self.settings.max_redirects}): {chain}; "
            "fetch the last URL directly if it is the page you want"
        )

    async def _send(
        self, url: httpx.URL, addresses: list[IPAddress], stored: Download | None
    ) -> httpx.Response:
        host = url.raw_host.decode("ascii")
        headers = {"Host": url.netloc.decode("ascii")}
        if stored is not None and stored.etag:
            headers["If-None-Match"] = stored.etag
        if stored is not None and stored.last_modified:
            headers["If-Modified-Since"] = stored.last_modified
        extensions = {"sni_hostname": host} if url.scheme == "https" and not _is_ip(host) else {}
        failures: list[str] = []
        for address in addresses[:MAX_ADDRESSES_TRIED]:
            pinned = url.copy_with(host=str(address))
            request = self._http().build_request(
                "GET", pinned, headers=headers, extensions=extensions
            )
            try:
                return await self._http().send(request, stream=True)
            except httpx.ConnectTimeout:
                raise FetchTimeout(
                    f"no response within {self.settings.connect_timeout_s:g} s: could not "
                    f"connect to {host}; the site may be down or blocked, try again later"
                ) from None
            except httpx.TimeoutException:
                raise self._read_timeout(host) from None
            except httpx.ConnectError as exc:
                if _is_tls_failure(exc):
                    raise TLSFailure(
                        f"TLS error talking to {host}: {_tls_reason(exc)}; the site's certificate "
                        "or TLS set-up is not valid, do not work around it; use another source"
                    ) from None
                failures.append(f"{address}: {exc or type(exc).__name__}")
            except httpx.TransportError as exc:
                raise ConnectFailure(
                    f"the connection to {host} failed ({exc or type(exc).__name__}); "
                    "try again later"
                ) from None
        raise ConnectFailure(
            f"could not connect to {host} ({'; '.join(failures)}); the site may be down, "
            "try again later or use another source"
        )

    def _read_timeout(self, host: str) -> FetchTimeout:
        return FetchTimeout(
            f"no response within {self.settings.read_timeout_s:g} s from {host}; the server is "
            "slow or stuck, try again later or use another source"
        )

    async def _finish(
        self, url: httpx.URL, response: httpx.Response, stored: Download | None, hops: tuple
    ) -> Download:
        now = datetime.now(UTC)
        status = response.status_code
        if status == 304 and stored is not None:
            return replace(
                stored,
                final_url=str(url),
                redirects=hops,
                fetched_at=now,
                cache_state="revalidated",
            )
        if status >= 300:
            raise HTTPStatusFailure(status_message(str(url), status), status)
        content_type = response.headers.get("content-type", "")
        media_type = content_type.split(";", 1)[0].strip().lower()
        if media_type and not is_text_media(media_type):
            raise NotTextError(
                f"not a text page: {url} is {media_type}; web_fetch reads HTML, Markdown, "
                "plain text and JSON"
            )
        declared = _declared_length(response)
        limit = self.settings.refuse_over_bytes
        if declared is not None and declared > limit:
            raise TooLargeError(
                f"too large: {url} is {size_label(declared)}, over the {size_label(limit)} "
                "limit; fetch a smaller page (a README, a raw file, one docs page) instead"
            )
        body, truncated_at = await self._read_capped(response, url.host)
        if not media_type and b"\x00" in body[:8192]:
            raise NotTextError(f"not a text page: {url} sent binary data without a content type")
        download = Download(
            url=str(url),
            final_url=str(url),
            status=status,
            content_type=content_type,
            body=body,
            fetched_at=now,
            redirects=hops,
            truncated_at=truncated_at,
            etag=response.headers.get("etag"),
            last_modified=response.headers.get("last-modified"),
        )
        if self._disk_cache is not None:
            self._disk_cache.store(str(url), download)
        return download

    async def _read_capped(self, response: httpx.Response, host: str) -> tuple[bytes, int | None]:
        """The body up to the byte cap, decoded here piece by piece (not by httpx, which inflates
        a whole chunk first), so a compression bomb stops at the cap with little memory used.
        Compressed input is capped too: a stream that inflates to nothing cannot run forever."""
        cap = self.settings.max_bytes
        encoding = response.headers.get("content-encoding", "")
        try:
            decoder = BoundedDecoder(content_codings(encoding, self.settings.max_content_encodings))
        except DecodingError as exc:
            raise DecodingError(
                f"{host} sent a body that was not read: {exc}; use another source"
            ) from None
        buffer = bytearray()
        raw_bytes = 0
        try:
            async for raw in response.aiter_raw(chunk_size=CHUNK_BYTES):
                raw_bytes += len(raw)
                for piece in decoder.feed(raw):
                    buffer += piece
                    if len(buffer) > cap:
                        del buffer[cap:]
                        return bytes(buffer), cap
                if raw_bytes > cap:
                    return bytes(buffer), cap
        except httpx.TimeoutException:
            raise self._read_timeout(host) from None
        except DecodingError as exc:
            raise DecodingError(
                f"{host} sent a body that could not be decoded (content-encoding {encoding}: "
                f"{exc}); try again later or use another source"
            ) from None
        except httpx.TransportError as exc:
            raise ConnectFailure(
                f"the connection to {host} broke while reading ({exc or type(exc).__name__}); "
                "try again later"
            ) from None
        return bytes(buffer), None


def parse_url(url: str) -> httpx.URL:
    """A checked http(s) URL, or BadURLError saying what is wrong with it."""
    try:
        parsed = httpx.URL(url.strip())
    except httpx.InvalidURL as exc:
        raise BadURLError(f"{url!r} is not a valid URL ({exc}); give a full http(s) URL") from None
    if parsed.scheme not in ("http", "https"):
        raise BadURLError(
            f"only http and https URLs can be fetched, not {url!r}; give a full http(s) URL"
        )
    if not parsed.raw_host:
        raise BadURLError(f"{url!r} has no host name; give a full http(s) URL")
    return parsed


def redirect_target(current: httpx.URL, location: str) -> httpx.URL:
    try:
        target = current.join(location)
    except httpx.InvalidURL:
        raise RedirectError(f"{current} redirects to an invalid URL ({location!r})") from None
    if target.scheme not in ("http", "https"):
        raise RedirectError(f"{current} redirects to {target}, which is not http(s); not followed")
    return target


def is_text_media(media_type: str) -> bool:
    return (
        media_type.startswith("text/")
        or media_type in TEXT_MEDIA_TYPES
        or media_type.endswith(("+json", "+xml"))
    )


def status_message(url: str, status: int) -> str:
    """The status, its standard name (not the server's wording, which is page-controlled text)
    and a hint."""
    try:
        reason = HTTPStatus(status).phrase
    except ValueError:
        reason = "(non-standard status)"
    if status in STATUS_HINTS:
        hint = STATUS_HINTS[status]
    elif status >= 500:
        hint = "the server failed; try again later or use another source"
    elif status >= 400:
        hint = "the server rejected the request; check the address"
    else:
        hint = "the response cannot be followed; open the page it points to directly"
    return f"HTTP {status} {reason} from {url}: {hint}"


def _declared_length(response: httpx.Response) -> int | None:
    try:
        return int(response.headers["content-length"])
    except (KeyError, ValueError):
        return None


def _is_ip(host: str) -> bool:
    try:
        ipaddress.ip_address(host)
    except ValueError:
        return False
    return True


def _is_tls_failure(exc: BaseException) -> bool:
    seen: BaseException | None = exc
    while seen is not None:
        if isinstance(seen, ssl.SSLError):
            return True
        seen = seen.__cause__ or seen.__context__
    return "SSL" in str(exc) or "TLS" in str(exc)


def _tls_reason(exc: BaseException) -> str:
    seen: BaseException | None = exc
    while seen is not None:
        if isinstance(seen, ssl.SSLError):
            return getattr(seen, "verify_message", None) or seen.reason or str(seen)
        seen = seen.__cause__ or seen.__context__
    return str(exc)
