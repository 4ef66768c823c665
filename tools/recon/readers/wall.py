"""The `wall` section: whether the probe ran inside Scout's wall (its parts, Landlock's ABI
among them, as the helper told the probe in SCOUT_WALL), the kernel, seccomp, and the helper."""

from __future__ import annotations

import re

from tools.recon.readers.section_reader import SectionReader
from tools.world.facts import WallFacts


def read_wall(reader: SectionReader, unwalled: str | None) -> WallFacts:
    """`unwalled`: why the probe pack could not run inside the wall (it then ran without)."""
    facts = WallFacts()
    values = reader.read(facts, "wall", _key_values) or {}
    inside = values.get("inside", "")
    facts.inside = bool(inside) and unwalled is None
    facts.detail = unwalled or inside or None
    facts.kernel = values.get("kernel")
    abi = re.search(r"landlock-abi-(\d+)", inside)
    facts.landlock_abi = int(abi[1]) if abi else None
    facts.seccomp = values["seccomp"] == "yes" if "seccomp" in values else None
    facts.helper = values.get("helper") == "present"
    return facts


def _key_values(output: str) -> dict[str, str]:
    pairs = (line.partition("=") for line in output.splitlines() if "=" in line)
    return {key.strip(): value.strip() for key, _, value in pairs}
