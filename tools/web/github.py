"""GitHub pages are heavy HTML around a file; the raw file is what a reader wants."""

from __future__ import annotations

from urllib.parse import urlsplit

RAW_HOST = "https://raw.githubusercontent.com"
GITHUB_HOSTS = frozenset({"github.com", "www.github.com"})


def github_raw_url(url: str) -> str | None:
    """The raw.githubusercontent.com URL that holds what `url` shows, or None.

    `https://github.com/o/r` (and `/tree/REF`) → the README at HEAD (REF);
    `https://github.com/o/r/blob/REF/path` → `raw.githubusercontent.com/o/r/REF/path`.
    Other GitHub pages (issues, pulls, releases) stay as they are.
    """
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or (parts.hostname or "") not in GITHUB_HOSTS:
        return None
    segments = [s for s in parts.path.split("/") if s]
    if len(segments) < 2:
        return None
    owner, repo = segments[0], segments[1].removesuffix(".git")
    rest = segments[2:]
    if not rest:
        return f"{RAW_HOST}/{owner}/{repo}/HEAD/README.md"
    if rest[0] == "tree" and len(rest) == 2:
        return f"{RAW_HOST}/{owner}/{repo}/{rest[1]}/README.md"
    if rest[0] == "blob" and len(rest) >= 3:
        return f"{RAW_HOST}/{owner}/{repo}/{'/'.join(rest[1:])}"
    return None
