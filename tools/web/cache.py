"""Two caches: this session's memory (no request at all) and a disk cache for conditional GETs.

The disk cache keeps only bodies the server labelled with an ETag or Last-Modified, keyed by the
URL of the hop that answered, so the next fetch can ask "changed since?" and take a 304.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import time
from dataclasses import replace
from datetime import datetime
from pathlib import Path

from tools.web.download import Download


class SessionCache:
    """Downloads of this session by requested URL, for `ttl_s` seconds."""

    def __init__(self, ttl_s: float) -> None:
        self._ttl_s = ttl_s
        self._entries: dict[str, tuple[float, Download]] = {}

    def get(self, url: str) -> Download | None:
        entry = self._entries.get(url)
        if entry is None or time.monotonic() - entry[0] > self._ttl_s:
            return None
        return replace(entry[1], cache_state="session")

    def put(self, url: str, download: Download) -> None:
        self._entries[url] = (time.monotonic(), download)


class DiskCache:
    """Validated bodies on disk: `<key>.json` holds the headers, `<key>.body` the bytes."""

    def __init__(self, folder: Path) -> None:
        self._folder = folder

    def _paths(self, url: str) -> tuple[Path, Path]:
        key = hashlib.sha256(url.encode()).hexdigest()[:32]
        return self._folder / f"{key}.json", self._folder / f"{key}.body"

    def load(self, url: str) -> Download | None:
        """The stored download for this exact URL, or None (also when the files are damaged)."""
        meta_path, body_path = self._paths(url)
        try:
            meta = json.loads(meta_path.read_text(encoding="utf-8"))
            body = body_path.read_bytes()
            if meta["url"] != url:
                return None
            return Download(
                url=url,
                final_url=url,
                status=int(meta["status"]),
                content_type=str(meta["content_type"]),
                body=body,
                fetched_at=datetime.fromisoformat(meta["fetched_at"]),
                etag=meta.get("etag"),
                last_modified=meta.get("last_modified"),
            )
        except (OSError, ValueError, KeyError, TypeError):
            return None

    def store(self, url: str, download: Download) -> None:
        """Keep a complete 200 body that carries a validator; write atomically, ignore disk
        errors (a cache that cannot write only costs a full download next time)."""
        if download.status != 200 or download.truncated_at is not None:
            return
        if not (download.etag or download.last_modified):
            return
        meta_path, body_path = self._paths(url)
        meta = {
            "url": url,
            "status": download.status,
            "content_type": download.content_type,
            "fetched_at": download.fetched_at.isoformat(),
            "etag": download.etag,
            "last_modified": download.last_modified,
        }
        with contextlib.suppress(OSError):
            self._folder.mkdir(parents=True, exist_ok=True)
            _write_atomic(body_path, download.body)
            _write_atomic(meta_path, json.dumps(meta).encode())


def _write_atomic(path: Path, data: bytes) -> None:
    tmp = path.with_suffix(path.suffix + f".{os.getpid()}.tmp")
    tmp.write_bytes(data)
    tmp.replace(path)
