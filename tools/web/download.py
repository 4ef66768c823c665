"""One fetched HTTP body and what is known about how it was got."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime


@dataclass(frozen=True)
class Download:
    """The raw result of following a URL to its final response.

    `truncated_at` is the byte cap when reading stopped there. `cache_state` is None for a fresh
    download, "session" when it came from this session's memory, "revalidated" when the server
    answered 304 to a conditional GET and the body came from the disk cache.
    """

    url: str
    final_url: str
    status: int
    content_type: str
    body: bytes
    fetched_at: datetime
    redirects: tuple[str, ...] = ()
    truncated_at: int | None = None
    etag: str | None = None
    last_modified: str | None = None
    cache_state: str | None = None
    duration_s: float = field(default=0.0, compare=False)

    @property
    def media_type(self) -> str:
        """'text/html' out of 'text/html; charset=utf-8'."""
        return self.content_type.split(";", 1)[0].strip().lower()

    @property
    def charset(self) -> str | None:
        for part in self.content_type.split(";")[1:]:
            name, _, value = part.partition("=")
            if name.strip().lower() == "charset" and value.strip():
                return value.strip().strip('"')
        return None
