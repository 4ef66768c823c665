"""The approvals desk: where an MCP session's pending approvals wait for `scout approvals`.

`scout mcp` runs as a child of the host agent, with no terminal of its own, so the person who
decides is somewhere else: at another terminal, running `scout approvals`. The two processes
meet in a folder of the Scout home that only its account can open: one file per pending
request (what the gate would have shown), one file per decision beside it. The server reads a
decision only for an approval it posted itself, holds it to that request's fingerprint and uses
it once (agent/mcp/approvals.py); the desk only carries it.
"""

from __future__ import annotations

import contextlib
import json
import os
from datetime import UTC, datetime
from pathlib import Path

from pydantic import BaseModel, ValidationError

from agent.safety.approvals import ApprovalRequest, Decision


class PostedApproval(BaseModel):
    """A pending request as `scout approvals` lists it: the request and who asked for it."""

    request: ApprovalRequest
    principal: str
    client: str
    session: str
    posted_at: str


class ApprovalDesk:
    def __init__(self, folder: Path) -> None:
        self.folder = folder

    def _pending(self, approval_id: str) -> Path:
        return self.folder / f"{_safe(approval_id)}.request.json"

    def _decided(self, approval_id: str) -> Path:
        return self.folder / f"{_safe(approval_id)}.decision.json"

    def post(self, request: ApprovalRequest, *, principal: str, client: str, session: str) -> None:
        """Put a request on the desk (the folder is made private to this account first)."""
        self.folder.mkdir(parents=True, exist_ok=True, mode=0o700)
        self.folder.chmod(0o700)
        posted = PostedApproval(
            request=request,
            principal=principal,
            client=client,
            session=session,
            posted_at=datetime.now(UTC).isoformat(timespec="seconds").replace("+00:00", "Z"),
        )
        _write(self._pending(request.id), posted.model_dump_json(indent=1))

    def waiting(self) -> list[PostedApproval]:
        """What waits for a decision, oldest first; an unreadable file is skipped."""
        found: list[PostedApproval] = []
        for path in sorted(self.folder.glob("*.request.json"), key=_mtime):
            approval_id = path.name.removesuffix(".request.json")
            if self._decided(approval_id).exists():
                continue
            with contextlib.suppress(OSError, ValidationError, ValueError):
                found.append(PostedApproval.model_validate_json(path.read_text()))
        return found

    def find(self, approval_id: str) -> PostedApproval | None:
        """The pending request with this id, if it still waits."""
        return next((p for p in self.waiting() if p.request.id == approval_id), None)

    def decide(self, approval_id: str, decision: Decision) -> None:
        """`scout approvals`: leave the decision for the server to collect."""
        _write(self._decided(approval_id), decision.model_dump_json())

    def answer(self, approval_id: str) -> Decision | None:
        """The decision left for this approval, if one was; a malformed one is no decision."""
        path = self._decided(approval_id)
        try:
            return Decision.model_validate(json.loads(path.read_text()))
        except (OSError, ValidationError, ValueError):
            return None

    def withdraw(self, approval_id: str) -> None:
        """Take the request and its decision off the desk (used, expired or the server ended)."""
        for path in (self._pending(approval_id), self._decided(approval_id)):
            path.unlink(missing_ok=True)


def _safe(approval_id: str) -> str:
    """An id as a file name: ids are hex, anything else cannot name a file outside the desk."""
    if not approval_id or not all(c.isalnum() for c in approval_id):
        raise ValueError(f"not an approval id: {approval_id!r}")
    return approval_id


def _write(path: Path, text: str) -> None:
    """Write whole or not at all: the other process never reads half a file."""
    partial = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    fd = os.open(partial, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w") as out:
        out.write(text)
    partial.replace(path)


def _mtime(path: Path) -> float:
    try:
        return path.stat().st_mtime
    except OSError:
        return 0.0
