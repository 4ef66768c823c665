"""pydantic's validation errors as short `where: what` lines a person or the model can act on.

Tool input, settings, inventories and transcript lines all report invalid data this one way.
"""

from __future__ import annotations

from pydantic import ValidationError


def validation_problems(exc: ValidationError) -> list[str]:
    """One `field.path: message` line per error; `(input)` when the whole value is at fault."""
    return [
        f"{'.'.join(str(part) for part in error['loc']) or '(input)'}: {error['msg']}"
        for error in exc.errors()
    ]
