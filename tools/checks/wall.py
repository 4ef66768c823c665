"""The wall: hosts whose reads cannot run inside it, where the gate narrows what runs unasked."""

from __future__ import annotations

from collections.abc import Mapping

from tools.world.facts import HostFacts
from tools.world.findings import Finding


def wall_findings(hosts: Mapping[str, HostFacts]) -> list[Finding]:
    """One finding per host whose probe ran without the wall, saying why (tools/wall/)."""
    return [
        Finding(
            severity="info",
            check="wall",
            kind="reads_unwalled",
            hosts=[name],
            message=(
                f"reads on {name} cannot run inside the wall ({facts.wall.detail or 'unknown'}): "
                "there only the probe pack and exact read shapes run unasked; other reads ask"
            ),
            fix="a kernel with Landlock (Linux 5.13+) and python3 on the host lift it",
        )
        for name, facts in hosts.items()
        if facts.wall.inside is False and facts.wall.sources
    ]
