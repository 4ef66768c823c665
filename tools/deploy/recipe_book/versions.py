"""Which of a recipe's flags the image's engine knows: a flag newer than the engine's version is
left out, and the plan says which and why (an unknown flag would stop the engine at its argument
parser: `vllm serve: error: unrecognized arguments: …`)."""

from __future__ import annotations

import re
from collections.abc import Sequence

from tools.deploy.recipe_book.schema import Flag

_NUMBERS = re.compile(r"^v?(\d+(?:\.\d+)*)")


def version_key(version: str) -> tuple[int, ...] | None:
    """`0.19.1+nv26.05` → (0, 19, 1); None when it does not start with numbers."""
    match = _NUMBERS.match(version.strip())
    return tuple(int(p) for p in match[1].split(".")) if match else None


def supported(flag: Flag, engine_version: str | None) -> bool:
    """A flag without `since`, or an engine of unknown version, keeps the flag."""
    if flag.since is None or engine_version is None:
        return True
    have, need = version_key(engine_version), version_key(flag.since)
    return have is None or need is None or have >= need


def split_by_version(
    flags: Sequence[Flag], engine_version: str | None
) -> tuple[list[Flag], list[Flag]]:
    """(kept, left out) for this engine version."""
    kept = [f for f in flags if supported(f, engine_version)]
    return kept, [f for f in flags if f not in kept]
