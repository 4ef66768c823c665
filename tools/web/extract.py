"""Turning a fetched body into text worth reading: Markdown of a page's main content.

HTML goes through trafilatura (main content, links, code blocks kept); when it fails or finds
little, selectolax gives the page's visible text instead. Markdown and plain text pass through,
JSON is pretty-printed. CPU-bound: callers run `page_text` in a thread.
"""

from __future__ import annotations

import codecs
import json
import re
from dataclasses import dataclass

from selectolax.lexbor import LexborHTMLParser as HTMLParser

HTML_TYPES = frozenset({"text/html", "application/xhtml+xml"})
MARKDOWN_TYPES = frozenset({"text/markdown", "text/x-markdown"})
# trafilatura's result is kept when it has this much text or at least this share of the fallback's.
MIN_MAIN_CHARS = 200
MIN_MAIN_SHARE = 0.5
_META_CHARSET = re.compile(rb"<meta[^>]+charset=[\"']?([A-Za-z0-9_\-]+)", re.I)
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
        try:
            pretty = json.dumps(json.loads(text), indent=2, ensure_ascii=False)
        except ValueError:
            return PageText(text, None, "text", "as-is")
        return PageText(pretty, None, "json", "json")
    is_markdown = media_type in MARKDOWN_TYPES or url.lower().split("?", 1)[0].endswith(".md")
    if is_markdown:
        return PageText(text, _markdown_title(text), "markdown", "as-is")
    return PageText(text, None, "text", "as-is")


def decode(body: bytes, charset: str | None) -> str:
    """Bytes → str with the declared charset (UTF-8 when absent or unknown), never failing."""
    encoding = "utf-8"
    if charset:
        try:
            encoding = codecs.lookup(charset).name
        except LookupError:
            encoding = "utf-8"
    return body.decode(encoding, errors="replace")


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
    match = _META_CHARSET.search(body[:4096])
    return match.group(1).decode("ascii") if match else None


def _markdown_title(text: str) -> str | None:
    for line in text.splitlines():
        if line.startswith("# "):
            return line[2:].strip()
    return None
