"""What a tool that reads the web is given: the session's fetcher (tools/web/fetcher.py).

One fetcher per session keeps the caches, the address guard and the page-reading worker
processes shared by every call; the session opens it, hands it to tools as `ctx.web`, and closes
it.
"""

from __future__ import annotations

from typing import Protocol

from tools.web.download import Download
from tools.web.reading import PageReading


class PageReader(Protocol):
    async def read(
        self, body: bytes, media_type: str, charset: str | None, url: str, select: str | None
    ) -> PageReading: ...


class PageFetcher(Protocol):
    pages: PageReader

    async def fetch(self, url: str) -> Download: ...
