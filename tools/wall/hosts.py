"""Per host: do reads run inside the wall there, and if not, what may still run unasked.

Recon fills it (the probe pack runs inside the wall and reports the kernel's Landlock ABI and
the helper), and so does any walled call whose helper refused to run (`record`). A host whose
reads cannot be walled narrows what runs unasked to the probe pack and `narrow.READ_SHAPES`:
`risk()` of a shell tool raises anything else to at least mutating, so it asks.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class WallState:
    walled: bool
    detail: str  # the wall's parts, or why there is none

    def sentence(self) -> str:
        if self.walled:
            return f"reads run inside the wall ({self.detail})"
        return f"reads cannot be walled: {self.detail}"


class HostWalls:
    """What Scout knows of each host's wall; unknown until recon or a walled call says."""

    def __init__(self) -> None:
        self._hosts: dict[str, WallState] = {}

    def record(self, host: str, walled: bool, detail: str) -> bool:
        """Remember it; True when this is news (a host newly found without a wall)."""
        before = self._hosts.get(host)
        self._hosts[host] = WallState(walled, detail)
        return not walled and (before is None or before.walled)

    def state(self, host: str) -> WallState | None:
        return self._hosts.get(host)

    def unwalled(self, hosts: list[str]) -> dict[str, str]:
        """The hosts known to have no wall, with why."""
        return {
            host: state.detail
            for host in hosts
            if (state := self._hosts.get(host)) is not None and not state.walled
        }
