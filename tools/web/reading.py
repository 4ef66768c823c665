"""What web_fetch reads out of a body: its text, or one section of it, or why no section matched.

`read_page` is the whole CPU-bound step (decoding, HTML extraction, section picking) as one pure
function, so it can run in a worker process that is killed when a hostile page keeps it busy.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any

from tools.web.extract import page_text
from tools.web.sections import headings, select_section
from tools.web.untrusted import strip_invisible

HEADINGS_LISTED = 40
HEADING_CHARS = 200


@dataclass(frozen=True)
class PageReading:
    """The readable text of a page, or of its section `section` when one was selected.

    When a selection matched no heading, `content` is empty, `section` None, and `headings` holds
    the page's first headings (of `headings_total`) so the model can pick one.
    """

    content: str
    title: str | None
    kind: str
    extractor: str
    section: str | None = None
    headings: tuple[str, ...] = ()
    headings_total: int = 0

    def to_json(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> PageReading:
        """The reading a worker sent; raises ValueError when it is not one."""
        try:
            return cls(
                content=_text(data["content"]),
                title=None if data["title"] is None else _text(data["title"]),
                kind=_text(data["kind"]),
                extractor=_text(data["extractor"]),
                section=None if data["section"] is None else _text(data["section"]),
                headings=tuple(_text(item) for item in data["headings"]),
                headings_total=int(data["headings_total"]),
            )
        except (KeyError, TypeError) as exc:
            raise ValueError(f"not a page reading ({exc})") from None


def read_page(
    body: bytes, media_type: str, charset: str | None, url: str, select: str | None
) -> PageReading:
    """The page's text, or the section under the heading that matches `select`."""
    page = page_text(body, media_type, charset, url)
    title = strip_invisible(page.title) if page.title else None
    if not select:
        return PageReading(page.text, title, page.kind, page.extractor)
    picked = select_section(page.text, select)
    if picked is not None:
        heading, content = picked
        return PageReading(content, title, page.kind, page.extractor, section=heading.text)
    titles = [heading.text for heading in headings(page.text)]
    listed = tuple(
        text if len(text) <= HEADING_CHARS else text[:HEADING_CHARS] + "…"
        for text in titles[:HEADINGS_LISTED]
    )
    return PageReading(
        "", title, page.kind, page.extractor, headings=listed, headings_total=len(titles)
    )


def _text(value: object) -> str:
    if not isinstance(value, str):
        raise TypeError(f"expected text, got {type(value).__name__}")
    return value
