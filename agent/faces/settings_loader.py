"""The one way a face asks for Scout's settings: the loader the CLI hands to each face it builds.

Why a type of its own: the faces add their commands to the parser before any settings load
(`scout --help` and recon's start stay fast), so each face gets the CLI's loader as an argument
and calls it when its command runs. One name keeps that contract in one place: the command's
flags in (None: not given), the settings out, or None once the loader has said why on stderr.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    from agent.runtime.settings import Settings


class SettingsLoader(Protocol):
    def __call__(self, flags: dict[str, Any], *, log: bool = False) -> Settings | None:
        """Settings from the file, the environment and `flags`; with `log`, logging goes to the
        settings' log file from here on. None: they could not load, and stderr says why."""
