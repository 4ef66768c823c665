"""Input checks the job tools share: job names and environment variable names."""

from __future__ import annotations

import re

from tools.jobs.folder import NAME_PATTERN


def check_env(env: dict[str, str] | None) -> dict[str, str] | None:
    for name in env or {}:
        if not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", name):
            raise ValueError(f"{name!r} is not a valid environment variable name")
    return env


def check_names(names: list[str] | None) -> list[str] | None:
    for name in names or []:
        if not re.fullmatch(NAME_PATTERN, name):
            raise ValueError(f"{name!r} is not a job name (letters, digits, '.', '_', '-')")
    return list(dict.fromkeys(names)) if names is not None else None


def unique(items: list[str]) -> list[str]:
    return list(dict.fromkeys(items))
