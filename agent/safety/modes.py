"""The session's modes, which decide how much the gate lets through without asking a person.

`plan`: only read-only work runs. `ask`: a person approves every change. `auto-safe`: the
operator's allow rules pre-approve mutating work. `ci`: whatever would need a person is refused.
"""

from __future__ import annotations

from typing import Literal, get_args

Mode = Literal["plan", "ask", "auto-safe", "ci"]
MODES: tuple[str, ...] = get_args(Mode)
