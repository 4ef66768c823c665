"""Reading one probe section into a fact group, recording where it came from and what went wrong.

A section whose tool is missing, refused, or printed something unreadable leaves its facts None
and says why in the group's `problem`; it never fails the host.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from datetime import datetime
from typing import TypeVar

from tools.recon import parsers as p
from tools.recon.sections import Section, command_for
from tools.world.facts import FactGroup, Provenance

T = TypeVar("T")


class SectionReader:
    """Parses one section at a time, recording provenance and problems on the fact group."""

    def __init__(self, host: str, sections: Mapping[str, Section], collected_at: datetime) -> None:
        self.host = host
        self.sections = sections
        self.collected_at = collected_at

    def read(self, group: FactGroup, name: str, parser: Callable[[str], T]) -> T | None:
        section = self.sections.get(name)
        if section is None:
            self._note(group, f"{name} did not run (the probe stopped before it)")
            return None
        group.sources.append(self.source(name))
        if section.missing:
            self._note(group, section.problem())
            return None
        try:
            return parser(section.output)
        except p.ParseError as exc:
            self._note(group, f"{name}: {exc}")
            return None

    def marker(self, group: FactGroup, name: str) -> bool | None:
        """A section that echoes `present` or `absent` (a file test), as True/False; else None."""
        said = self.read(group, name, lambda text: text.strip())
        return said == "present" if said in ("present", "absent") else None

    def source(self, name: str) -> Provenance:
        """Where a section's facts came from: host, command, time and exit status."""
        section = self.sections[name]
        return Provenance(
            host=self.host,
            command=command_for(name),
            collected_at=self.collected_at,
            exit_status=section.exit_status,
        )

    def note(self, group: FactGroup, problem: str) -> None:
        """Record what a section said that leaves a fact unknown though it parsed."""
        self._note(group, problem)

    @staticmethod
    def _note(group: FactGroup, problem: str) -> None:
        group.problem = problem if group.problem is None else f"{group.problem}; {problem}"
