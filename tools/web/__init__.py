"""The web hand's parts: address guard, fetcher with caches, HTML → Markdown, section picking.

`tools/web_fetch.py` puts them together as the `web_fetch` tool.
"""

from tools.web.download import Download
from tools.web.errors import WebFetchError
from tools.web.fetcher import WebFetcher
from tools.web.settings import WebSettings

__all__ = ["Download", "WebFetchError", "WebFetcher", "WebSettings"]
