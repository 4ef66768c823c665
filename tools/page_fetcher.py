"""What a tool that reads the web is given: the session's fetcher (tools/web/fetcher.py).

One fetcher per session keeps the caches and the address guard shared by every call; the
session opens it, hands it to tools as `ctx.web`, and closes it.
"""

from __future__ import annotations

from typing import Protocol

from tools.web.download import Download


class PageFetcher(Protocol):
    async def fetch(self, url: str) -> Download: ...
