"""The `wall` section: whether the probe ran inside Scout's wall and what the host's kernel
offers for one (the helper's `probe`, tools/wall/host_helper.py)."""

from __future__ import annotations

from tools.recon.facts import WallFacts
from tools.recon.readers.section_reader import SectionReader


def read_wall(reader: SectionReader, unwalled: str | None) -> WallFacts:
    """`unwalled`: why the probe pack could not run inside the wall (it then ran without)."""
    facts = WallFacts()
    values = reader.read(facts, "wall", _key_values) or {}
    inside = values.get("inside", "")
    facts.inside = bool(inside) and unwalled is None
    facts.detail = unwalled or inside or None
    facts.kernel = values.get("kernel")
    abi = values.get("landlock_abi", "")
    facts.landlock_abi = int(abi) if abi.isdigit() else None
    facts.seccomp = values["seccomp"] == "yes" if "seccomp" in values else None
    facts.python = values.get("python")
    facts.helper = values.get("helper") != "absent"
    if facts.python is None and not facts.helper:
        facts.detail = facts.detail or "Scout's wall helper is not on the host"
    return facts


def _key_values(output: str) -> dict[str, str]:
    pairs = (line.partition("=") for line in output.splitlines() if "=" in line)
    return {key.strip(): value.strip() for key, _, value in pairs}
