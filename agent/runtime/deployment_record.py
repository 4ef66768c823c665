"""The deployment record: the last known-good state of a proven rollout, read off its transcript.

A session's transcript already holds everything day two needs: the steps plan_deployment computed
(each with its host, its commands and its rollback), which of them passed, and the proof with its
fingerprint (image ID, serve command hash, engine version, nodes). The record is built from those
events alone, so a session resumed, replayed or run from another face yields the same record, and
nothing is recorded unless the approved rollout finished and its endpoint was proven.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Iterable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from pydantic import BaseModel, Field, ValidationError

from tools.deploy.plan.evictions import Recorded

# Steps whose work is a change to the host as Scout found it (not an artifact Scout made):
# undone only when the operator asks (`scout teardown --restore`).
CHANGE_KINDS = frozenset({"stop", "link-up", "netplan", "stop-earlyoom"})
_ON_HOST = re.compile(r"^(?P<command>.+?) on (?P<host>[A-Za-z0-9_.-]+)$")


class Started(BaseModel):
    """A container Scout created and left running: the engine, on `host`."""

    host: str
    container: str
    step: str


class Change(BaseModel):
    """What a step changed on `host`, and the command that undoes it (None: it cannot be)."""

    host: str
    step: str
    did: str
    undo: str | None
    undo_host: str


class DeploymentRecord(BaseModel):
    """One proven deployment: where it serves, what runs it, and how to take it back."""

    id: str
    model: str
    host: str
    port: int
    recorded_at: datetime
    transcript: str
    plan_hash: str
    started: list[Started]
    changes: list[Change]
    fingerprint: dict[str, Any] = Field(default_factory=dict)
    proof: str = ""
    # the rollout's steps as plan_deployment computed them (tools/deploy/steps.py:DeployStep):
    # what started the engine, and what fetched its image and weights, for an upgrade to redo
    # with other artifacts and a rollback to redo as they were (agent/daytwo/upgrade_plan.py)
    steps: list[dict[str, Any]] = Field(default_factory=list)

    @property
    def endpoint(self) -> str:
        return f"{self.host}:{self.port}"

    def shared_with(self, other: DeploymentRecord) -> list[str]:
        """`host (container)` for each container both records name: a plan that removes one
        deployment's evicts the other's, and must say so (several models, one record each)."""
        mine = {(s.host, s.container) for s in self.started}
        return sorted(f"{s.host} ({s.container})" for s in other.started
                      if other.id != self.id and (s.host, s.container) in mine)  # fmt: skip

    def evictions(self, others: list[DeploymentRecord]) -> list[str]:
        """The plan's risk line for each other recorded deployment removing this one evicts."""
        return [
            f"evicts the recorded deployment {other.id} ({other.model} at {other.endpoint}): "
            f"it shares {', '.join(shared)} with this one"
            for other in others
            if (shared := self.shared_with(other))
        ]

    def hosts(self) -> list[str]:
        """Every host the deployment touched, the serving one first."""
        seen = [self.host]
        for name in [s.host for s in self.started] + [c.host for c in self.changes]:
            if name not in seen:
                seen.append(name)
        return seen


def record_id(model: str, host: str, port: int) -> str:
    """The record's name: one deployment per endpoint, so a new rollout there replaces it."""
    slug = re.sub(r"[^a-z0-9.]+", "-", model.rsplit("/", 1)[-1].lower()).strip("-")
    return f"{slug}@{host}-{port}"


def build_record(events: Iterable[dict[str, Any]], transcript: Path) -> DeploymentRecord | None:
    """The record of the transcript's proven rollout, or None when it holds none (no approved
    plan_deployment plan, a rollout that did not finish, or no passing endpoint check after it)."""
    approved, computed, done, proof = None, {}, set(), None
    for event in events:
        change = event.get("change") or {}
        kind = change.get("kind") if event.get("type") == "state_change" else event.get("name")
        if kind == "plan_approved":
            approved = change.get("plan_hash")
        elif kind == "deployment_computed":
            computed[change.get("plan_hash")] = change.get("steps") or []
        elif kind == "rollout_progress" and change.get("state") == "done":
            done.add(change.get("plan_hash"))
        elif kind == "endpoint_check" and event.get("type") == "tool_result":
            proof = event if not event.get("is_error") and approved in done else proof
    if proof is None or approved not in computed:
        return None
    return _record(approved, computed[approved], proof, transcript)


def _record(
    plan_hash: str, steps: list[dict[str, Any]], proof: dict[str, Any], transcript: Path
) -> DeploymentRecord:
    data = proof.get("data") or {}
    fingerprint = (data.get("report") or {}).get("fingerprint") or {}
    host, _, port = str(data.get("endpoint", ":0")).rpartition(":")
    model = str(data.get("model") or fingerprint.get("model") or "unknown model")
    return DeploymentRecord(
        id=record_id(model, host, int(port or 0)),
        model=model,
        host=host,
        port=int(port or 0),
        recorded_at=datetime.now(UTC),
        transcript=str(transcript),
        plan_hash=plan_hash,
        started=[
            Started(host=s["host"], container=s["creates"], step=s["id"])
            for s in steps
            if s.get("creates")
        ],
        changes=[_change(s) for s in steps if s.get("kind") in CHANGE_KINDS],
        fingerprint=fingerprint,
        proof=str(proof.get("text", "")).split("\n", 1)[0],
        steps=steps,
    )


def _change(step: dict[str, Any]) -> Change:
    """A step's change and its undo: the step's rollback, on the host it names (`… on spark-b`)
    or on the step's own; a rollback that is prose ("none (…)") cannot be run."""
    rollback = str(step.get("rollback", "")).strip()
    undo_host = step["host"]
    where = _ON_HOST.match(rollback)
    if where:
        rollback, undo_host = where["command"], where["host"]
    undo = None if not rollback or rollback.lower().startswith("none") else rollback
    did = "; ".join(step.get("actions") or [])
    return Change(host=step["host"], step=step["id"], did=did, undo=undo, undo_host=undo_host)


class RecordStore:
    """The records, one JSON file each, in `folder` (~/.scout/deployments by default)."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder

    def save(self, record: DeploymentRecord) -> Path:
        """Write `record`, replacing the one for the same endpoint; atomically, so a reader never
        meets half a file."""
        self.folder.mkdir(parents=True, exist_ok=True)
        path = self.folder / f"{record.id}.json"
        partial = path.with_name(f".{path.name}.{os.getpid()}.partial")
        partial.write_text(record.model_dump_json(indent=2) + "\n", encoding="utf-8")
        partial.replace(path)
        return path

    def load(self) -> tuple[list[DeploymentRecord], list[str]]:
        """Every record, newest first, and one line for each file that is not a record."""
        records, problems = [], []
        for path in sorted(self.folder.glob("*.json")) if self.folder.is_dir() else []:
            try:
                records.append(DeploymentRecord.model_validate_json(path.read_bytes()))
            except (ValidationError, ValueError, OSError) as exc:
                problems.append(f"{path}: not a deployment record ({_first_line(exc)})")
        records.sort(key=lambda r: r.recorded_at, reverse=True)
        return records, problems

    def find(self, name: str | None) -> DeploymentRecord | str:
        """The record named `name` (its id, endpoint or model), or the only one; else why not."""
        records, _ = self.load()
        matches = [r for r in records if name in {r.id, r.endpoint, r.model}] if name else records
        if len(matches) == 1:
            return matches[0]
        if not matches:
            known = ", ".join(r.id for r in records) or "none"
            which = f"named {name!r}" if name else "yet"
            return f"no deployment record {which} (known: {known})"
        return "several deployments are recorded; name one: " + ", ".join(r.id for r in matches)

    def recorded(self) -> list[Recorded]:
        """The records as plan_deployment checks a new plan against them (evictions)."""
        return [
            Recorded(
                id=r.id,
                model=r.model,
                host=r.host,
                port=r.port,
                containers=tuple((s.host, s.container) for s in r.started),
            )
            for r in self.load()[0]
        ]

    def remove(self, record: DeploymentRecord) -> None:
        (self.folder / f"{record.id}.json").unlink(missing_ok=True)


def read_transcript_events(path: Path) -> list[dict[str, Any]]:
    """The transcript's events; a line that is not JSON is skipped (the reader reports it)."""
    events = []
    for line in path.read_text(encoding="utf-8", errors="replace").splitlines():
        try:
            event = json.loads(line)
        except json.JSONDecodeError:
            continue
        if isinstance(event, dict):
            events.append(event)
    return events


def _first_line(exc: Exception) -> str:
    return str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
