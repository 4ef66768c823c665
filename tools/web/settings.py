"""Knobs of the web fetcher, with defaults that suit reading documentation pages."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

MB = 1024 * 1024


@dataclass(frozen=True)
class WebSettings:
    """How web_fetch reaches the web.

    `allowed_hosts` are exceptions to the address guard: host names (exact, any case) or IP
    addresses / networks ("127.0.0.1", "10.20.0.0/16") that may be fetched although they are
    private. `max_bytes` caps what is read of one body; a declared length above
    `refuse_over_bytes` is refused without reading. `cache_dir` keeps bodies with an ETag or
    Last-Modified for conditional GETs across sessions (None: memory cache only).
    `read_deadline_s` bounds turning one body into text (a worker process, killed when late);
    `max_content_encodings` is how many content codings (`gzip`, `deflate`) a body may stack.
    """

    allowed_hosts: tuple[str, ...] = ()
    connect_timeout_s: float = 10.0
    read_timeout_s: float = 20.0
    total_timeout_s: float = 60.0
    max_bytes: int = 5 * MB
    refuse_over_bytes: int = 200 * MB
    max_redirects: int = 5
    read_deadline_s: float = 15.0
    max_content_encodings: int = 1
    cache_dir: Path | None = None
    session_cache_ttl_s: float = 900.0
    user_agent: str = "scout-agent/0.1 (web_fetch)"


def size_label(n_bytes: int) -> str:
    """'5 MB', '64 KB', '900 bytes': for messages a person reads."""
    if n_bytes >= MB:
        return f"{n_bytes / MB:g} MB"
    if n_bytes >= 1024:
        return f"{n_bytes / 1024:g} KB"
    return f"{n_bytes} bytes"
