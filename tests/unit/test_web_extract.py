"""Body → readable text, and picking one section of it."""

from __future__ import annotations

from pathlib import Path

from selectolax.lexbor import LexborHTMLParser as HTMLParser

from tools.web.extract import main_content_suffices, page_text, visible_text
from tools.web.sections import headings, select_section

GUIDE = Path(__file__).parent.parent / "fixtures" / "web" / "spark_vllm_two_node_guide.html"
WORKER_RUN = """\
docker run -d --name vllm_worker --gpus all --network host --ipc host --shm-size 10.24g \\
  -v ~/.cache/huggingface:/root/.cache/huggingface \\
  "$VLLM_IMAGE" ray start --block --address=192.168.100.10:6379"""


def test_guide_main_content_keeps_code_links_and_headings() -> None:
    page = page_text(GUIDE.read_bytes(), "text/html", None, "https://build.example/spark/vllm")
    assert page.extractor == "trafilatura"
    assert f"```\n{WORKER_RUN}\n```" in page.text
    assert "[NGC](https://catalog.ngc.nvidia.com/orgs/nvidia/containers/vllm)" in page.text
    assert "(https://build.example/spark/connect-two-sparks/stacked-sparks)" in page.text
    assert [h.text for h in headings(page.text)] == [
        "Run vLLM across two DGX Spark systems",
        "Overview",
        "Step 1. Check the link between the nodes",
        "Step 2. Start the Ray cluster",
        "Step 3. Serve the model",
        "Troubleshooting",
    ]
    assert "Privacy Policy" not in page.text


def test_visible_text_fallback_drops_scripts_and_navigation_keeps_code() -> None:
    html = (
        "<html><head><script>var tracking = 1;</script></head><body>"
        "<nav><a href='/'>Home</a></nav><h2>Ports</h2><pre>ray start --head\n  --port=6379</pre>"
        "<div>Open 6379.</div><footer>Terms</footer></body></html>"
    )
    text = visible_text(HTMLParser(html))
    assert text == "## Ports\n```\nray start --head\n  --port=6379\n```\nOpen 6379."


def test_main_content_is_dropped_only_when_it_lost_most_of_the_page() -> None:
    assert main_content_suffices("x" * 200, "y" * 10_000)
    assert main_content_suffices("x" * 60, "y" * 100)
    assert not main_content_suffices("x" * 30, "y" * 100)


def test_charset_from_meta_tag_is_honoured() -> None:
    html = (
        '<html><head><meta charset="iso-8859-1"><title>Caf\xe9 guide</title></head>'
        "<body><p>Le caf\xe9.</p></body></html>"
    ).encode("latin-1")
    page = page_text(html, "text/html", None, "https://example.org/")
    assert page.title == "Café guide"
    assert "Le café." in page.text


def test_untyped_html_is_recognised() -> None:
    page = page_text(b"<!DOCTYPE html><html><title>T</title><p>hi</p></html>", "", None, "u")
    assert page.kind == "html" and page.title == "T"


def test_invalid_json_is_returned_as_text() -> None:
    page = page_text(b'{"cut": ', "application/json", None, "https://example.org/x.json")
    assert (page.kind, page.text) == ("text", '{"cut": ')


def test_markdown_served_as_plain_text_keeps_its_title() -> None:
    page = page_text(b"# vLLM\n\nText.", "text/plain", "utf-8", "https://r.example/README.md")
    assert (page.kind, page.title, page.text) == ("markdown", "vLLM", "# vLLM\n\nText.")


MARKDOWN = """\
# Guide

## Install

```bash
# not a heading: a shell comment
pip install vllm
```

### Check

vllm --version

## Serve

vllm serve model
"""


def test_section_runs_to_the_next_heading_of_its_rank() -> None:
    heading, section = select_section(MARKDOWN, "install")
    assert heading.text == "Install"
    assert section.startswith("## Install\n")
    assert "# not a heading: a shell comment" in section
    assert "### Check" in section and "vllm --version" in section
    assert "vllm serve" not in section


def test_section_by_its_words_and_not_found() -> None:
    heading, section = select_section(
        "# Guide\n\n## Step 3. Serve the model\n\nvllm serve", "serve model"
    )
    assert heading.text == "Step 3. Serve the model" and section.endswith("vllm serve")
    assert select_section(MARKDOWN, "Uninstall everything") is None
    assert select_section(MARKDOWN, r"^serv") is None  # a regex is text here, never run


def test_heading_forms() -> None:
    found = headings("## Install ##\n# C#\n#not a heading\n####### seven\n#\tTabbed\n")
    assert [(h.level, h.text) for h in found] == [(2, "Install"), (1, "C#"), (1, "Tabbed")]
    assert [h.text for h in headings("# see [the docs](https://x.example/a) and [x]")] == [
        "see the docs and [x]"
    ]


def test_exact_heading_beats_a_longer_one_containing_it() -> None:
    text = "## Serve the model\n\na\n\n## Serve\n\nb\n"
    assert select_section(text, "serve")[1] == "## Serve\n\nb"


def test_odd_or_unknown_charsets_read_as_utf8() -> None:
    body = "caf\u00e9 \u2713".encode()
    for charset in ("rot13", "rot_13", "base64", "no-such-charset", "idna", "unicode_escape"):
        page = page_text(body, "text/plain", charset, "https://example.org/x.txt")
        assert page.text == "caf\u00e9 \u2713", charset


def test_meta_charset_scan_is_one_pass_over_hostile_heads() -> None:
    hostile = b"<meta" * 2000 + b'<meta charset="windows-1251">'
    assert page_text(hostile + "\u0416".encode("cp1251"), "", None, "u").kind == "text"
    html = b"<html><head>" + b"<meta x" * 500 + b'><meta charset="koi8-r"></head><body>'
    page = page_text(html + "\u0416".encode("koi8-r") + b"</body></html>", "text/html", None, "u")
    assert "\u0416" in page.text


def test_json_that_would_balloon_when_indented_comes_back_as_is() -> None:
    deep = "[" * 500 + ",".join(["1"] * 20_000) + "]" * 500
    page = page_text(deep.encode(), "application/json", None, "https://example.org/x.json")
    assert (page.kind, page.text) == ("text", deep)
    too_deep = "[" * 100_000 + "]" * 100_000
    page = page_text(too_deep.encode(), "application/json", None, "https://example.org/x.json")
    assert page.kind == "text"
