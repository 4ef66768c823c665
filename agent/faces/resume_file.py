"""`--resume TRANSCRIPT` of `scout chat` and `scout run`: the session to continue, or why not.

A file that holds no session (empty, binary, another program's) is refused as `scout replay`
refuses it. A session that ran on other hosts than the settings' inventory names is refused,
not warned about: its plan's step approvals would run unasked on other machines, and its jobs
would be looked for where they never ran. A host the inventory has in addition is no
difference; a transcript that does not record its hosts resumes with a warning.
"""

from __future__ import annotations

import sys
from pathlib import Path

from agent.loop.resumed import RebuiltSession
from agent.loop.transcript import NotATranscript
from agent.runtime.resume import elsewhere, rebuild_file
from agent.runtime.settings import Settings
from tools.ssh import Inventory


def resumed(transcript: str | None, settings: Settings) -> RebuiltSession | str | None:
    """The session to resume from `transcript` (warnings on stderr), or why it cannot be."""
    if not transcript:
        return None
    path = Path(transcript)
    if not path.is_file():
        return f"no such transcript: {path}"
    try:
        resume, problems = rebuild_file(path)
    except NotATranscript as exc:
        return f"cannot resume: {exc}"
    hosts = Inventory.load(settings.inventory).where() if settings.inventory else {}
    moved = elsewhere(resume, hosts)
    if moved is not None:
        return (
            f"cannot resume {path}: {moved}. Resume with the inventory it ran on, or start a "
            "new session with --goal"
        )
    if resume.hosts is None and hosts:
        problems.append("it does not record the hosts it ran on; they could not be compared")
    for problem in problems:
        print(f"warning: {path}: {problem}", file=sys.stderr)
    return resume
