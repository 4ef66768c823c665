"""A host's facts read from real captures, through the same section readers recon uses.

Each capture in tests/fixtures/recon/ starts with a `# source:` line and may end with the
`# exit N` line its collector added; what is between is what the tool printed.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import UTC, datetime

from tests.support.captures import CAPTURES
from tools.recon.probe_parse import facts_from_sections
from tools.recon.sections import Section
from tools.world.facts import HostFacts

WHEN = datetime(2026, 12, 4, 17, 35, tzinfo=UTC)


def section(name: str, capture: str) -> Section:
    """The section `name` as the tool printed the capture, with its exit status."""
    source, _, output = (CAPTURES / capture).read_text().partition("\n")
    assert source.startswith("# source:"), capture
    status = 0
    lines = output.rstrip("\n").split("\n")
    if lines and lines[-1].startswith("# exit "):
        status = int(lines.pop().removeprefix("# exit "))
    return Section(name, "\n".join(lines) + "\n", status)


def host_from(host: str, captures: Mapping[str, str], said: Mapping[str, str] = {}) -> HostFacts:
    """Facts of `host` from captures (section name → capture file) and from literal outputs
    (section name → what the tool said, exit 127: a missing tool)."""
    sections = {name: section(name, capture) for name, capture in captures.items()}
    sections |= {name: Section(name, text, 127) for name, text in said.items()}
    return facts_from_sections(host, sections, WHEN)
