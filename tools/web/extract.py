"""Turning a fetched body into text worth reading: Markdown of a page's main content.

HTML goes through trafilatura (main content, links, code blocks kept); when it fails or finds
little, selectolax gives the page's visible text instead. Markdown and plain text pass through,
JSON is pretty-printed. CPU-bound on hostile input (a page of deeply nested tags keeps an HTML
parser busy for minutes): callers run it in a worker process they can kill (page_reader.py).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass

from selectolax.lexbor import LexborHTMLParser as HTMLParser

HTML_TYPES = frozenset({"text/html", "application/xhtml+xml"})
MARKDOWN_TYPES = frozenset({"text/markdown", "text/x-markdown"})
# trafilatura's result is kept when it has this much text or at least this share of the fallback's.
MIN_MAIN_CHARS = 200
MIN_MAIN_SHARE = 0.5
META_SCAN_BYTES = 4096
CHARSET_NAME_CHARS = frozenset(b"abcdefghijklmnopqrstuvwxyz0123456789_-.:")
# Codecs Python has that are not a page's character set: they transform text (escapes, IDNA) or
# bytes (rot13, base64 and the like fail with LookupError when asked to decode to text).
NOT_PAGE_CHARSETS = frozenset(
    {"idna", "punycode", "unicode-escape", "raw-unicode-escape", "undefined", "utf-7"}
)
# Pretty-printed JSON may grow this much beyond the body (deep nesting multiplies indentation).
PRETTY_JSON_GROWTH = 4
PRETTY_JSON_SLACK = 1024 * 1024
_BOILERPLATE_TAGS = "script, style, noscript, template, svg, nav, header, footer, aside, form"
_BLANK_RUNS = re.compile(r"\n{3,}")
# trafilatura glues a heading to the line above it when a one-line code block precedes it.
_GLUED_HEADING = re.compile(r"(?<=[^\n])\n(#{1,6} )")


@dataclass(frozen=True)
class PageText:
    """Readable text of a body. `kind` is html, markdown, text or json; `extractor` says how."""

    text: str
    title: str | None
    kind: str
    extractor: str


def page_text(body: bytes, media_type: str, charset: str | None, url: str) -> PageText:
    """The readable text of `body`, chosen by media type (and by its first bytes if untyped)."""
    if media_type in HTML_TYPES or (not media_type and _looks_like_html(body)):
        return html_to_markdown(decode(body, charset or _meta_charset(body)), url)
    text = decode(body, charset)
    if media_type == "application/json" or media_type.endswith("+json"):
        pretty = pretty_json(text)
        if pretty is None:
            return PageText(text, None, "text", "as-is")
        return PageText(pretty, None, "json", "json")
    is_markdown = media_type in MARKDOWN_TYPES or url.lower().split("?", 1)[0].endswith(".md")
    if is_markdown:
        return PageText(text, _markdown_title(text), "markdown", "as-is")
    return PageText(text, None, "text", "as-is")


def decode(body: bytes, charset: str | None) -> str:
    """Bytes → str with the declared charset (UTF-8 when absent, unknown or not a character set,
    like `rot13`), never failing."""
    if charset and charset.strip().lower().replace("_", "-") not in NOT_PAGE_CHARSETS:
        try:
            return body.decode(charset.strip(), errors="replace")
        except (LookupError, UnicodeError, ValueError, TypeError):
            pass  # an odd declaration is the page's mistake; read it as UTF-8 instead
    return body.decode("utf-8", errors="replace")


def pretty_json(text: str) -> str | None:
    """`text` re-indented, or None when it is not JSON (or nests so deep that indenting it would
    multiply its size)."""
    try:
        document = json.loads(text)
    except (ValueError, RecursionError):
        return None
    limit = PRETTY_JSON_GROWTH * len(text) + PRETTY_JSON_SLACK
    pieces: list[str] = []
    size = 0
    try:
        for piece in json.JSONEncoder(indent=2, ensure_ascii=False).iterencode(document):
            size += len(piece)
            if size > limit:
                return None
            pieces.append(piece)
    except RecursionError:
        return None
    return "".join(pieces)


def html_to_markdown(html: str, url: str) -> PageText:
    tree = HTMLParser(html)
    title_node = tree.css_first("title")
    title = title_node.text(strip=True) if title_node else None
    fallback = visible_text(tree)
    main = _trafilatura_markdown(html, url)
    if main is not None and main_content_suffices(main, fallback):
        return PageText(_GLUED_HEADING.sub(r"\n\n\1", main), title, "html", "trafilatura")
    return PageText(fallback, title, "html", "selectolax")


def main_content_suffices(main: str, fallback: str) -> bool:
    """Keep trafilatura's main content unless it lost most of what the page visibly says."""
    return len(main) >= MIN_MAIN_CHARS or len(main) >= MIN_MAIN_SHARE * len(fallback)


def _trafilatura_markdown(html: str, url: str) -> str | None:
    import trafilatura  # heavy import (lxml, justext, dateparser): only when a page needs it

    try:
        return trafilatura.extract(
            html,
            url=url,
            output_format="markdown",
            include_links=True,
            include_formatting=True,
            include_tables=True,
            include_comments=False,
        )
    except Exception:  # a parser fed hostile HTML may raise anything; the fallback still works
        return None


def visible_text(tree: HTMLParser) -> str:
    """The page's text without scripts and navigation; headings as '#' lines, code fenced."""
    for node in tree.css(_BOILERPLATE_TAGS):
        node.decompose()
    for node in tree.css("pre"):
        node.replace_with(f"\n```\n{node.text(deep=True).strip(chr(10))}\n```\n")
    for level in range(1, 7):
        for node in tree.css(f"h{level}"):
            node.replace_with(f"\n{'#' * level} {node.text(strip=True)}\n")
    root = tree.body or tree.root
    text = root.text(separator="\n", strip=True) if root else ""
    return _BLANK_RUNS.sub("\n\n", text)


def _looks_like_html(body: bytes) -> bool:
    head = body[:512].lstrip().lower()
    return head.startswith((b"<!doctype html", b"<html"))


def _meta_charset(body: bytes) -> str | None:
    """The charset a `<meta>` tag in the first bytes declares; one pass, no backtracking."""
    head = body[:META_SCAN_BYTES].lower()
    start = head.find(b"<meta")
    while start != -1:
        end = head.find(b">", start)
        tag = head[start : end if end != -1 else len(head)]
        at = tag.find(b"charset=")
        if at != -1:
            value = tag[at + len(b"charset=") :].lstrip(b"\"' ")
            name = bytearray()
            for byte in value[:40]:
                if byte not in CHARSET_NAME_CHARS:
                    break
                name.append(byte)
            if name:
                return name.decode("ascii")
        if end == -1:
            return None
        start = head.find(b"<meta", end)
    return None


def _markdown_title(text: str) -> str | None:
    for line in text.splitlines():
        if line.startswith("# "):
            return line[2:].strip()
    return None
