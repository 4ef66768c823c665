"""Preflight's weights check: does each node's HF cache hold a complete copy of the model, and
if not, can the disk hold one. The engines run with HF_HUB_OFFLINE=1, so a missing copy fails
the launch; the fix each finding names is what the plan does (download on the head, copy to
each worker).

A copy counts as complete when three things hold, read from the Hub cache's own layout (recon's
hf-models section): its size reaches the model's, no `blobs/*.incomplete` is left (a download
under way or interrupted), and `refs/main` names the wanted commit — the Hub's current one when
Scout looked it up (the API's `sha`), else, for a worker, the head's (the plan copies the head's
folder). Where nothing names the wanted commit (the head without the Hub's answer, or a cache
folder measured only with `du`), the finding says the size alone was checked.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Literal

from tools.checks import Finding, Severity
from tools.deploy.choices import DeployChoices
from tools.deploy.plan.fit import DEFAULT_HF_CACHE, gb
from tools.world.facts import HostFacts

DISK_MARGIN = 1.1
COMPLETE_FRACTION = 0.98  # du of a whole copy can fall a little short of the Hub's byte count
# findings whose hosts the plan fetches the weights for (tools/deploy/plan/planner.py)
FETCH_KINDS = frozenset(
    {"weights_not_cached", "weights_unfinished", "weights_old_revision", "disk_too_small"}
)

CacheState = Literal["cached", "absent", "unknown"]


@dataclass(frozen=True)
class CacheCopy:
    """One node's copy as preflight sees it; revision None: no refs/main or not read."""

    state: CacheState
    size: int | None = None
    revision: str | None = None
    incomplete: int = 0


@dataclass(frozen=True)
class WantedRevision:
    """The commit a copy must be at, and whose it is ("the Hub's current", "spark-a's")."""

    commit: str
    whose: str


def _weights_finding(
    severity: Severity, kind: str, message: str, hosts: list[str], fix: str | None = None
) -> Finding:
    return Finding(
        severity=severity, check="weights", kind=kind, hosts=hosts, message=message, fix=fix
    )


def short(commit: str) -> str:
    """A commit as git shortens it (7 characters)."""
    return commit[:7]


def _cache_copy(
    host: str, facts: HostFacts, choices: DeployChoices, measured: Mapping[str, int | None]
) -> CacheCopy:
    """The model in the host's HF cache. A measurement passed in (`du` on a custom hf_cache)
    wins, with no revision; else recon's listing of the default cache answers."""
    if host in measured:
        size = measured[host]
        return CacheCopy("absent") if size is None else CacheCopy("cached", size)
    cache = facts.hf_cache
    if cache.models is None or choices.hf_cache != DEFAULT_HF_CACHE:
        return CacheCopy("unknown")
    if choices.model not in cache.models:
        return CacheCopy("absent")
    listed = cache.copies.get(choices.model)
    if listed is None:
        return CacheCopy("cached", cache.models[choices.model])
    return CacheCopy(
        "cached", cache.models[choices.model], listed.revision, listed.incomplete_blobs
    )


def _wanted(
    host: str, choices: DeployChoices, head_copy: CacheCopy, hub_revision: str | None
) -> WantedRevision | None:
    if hub_revision:
        return WantedRevision(hub_revision, "the Hub's current")
    if host != choices.head and head_copy.revision:
        return WantedRevision(head_copy.revision, f"the head {choices.head}'s")
    return None


def weights_findings(
    hosts: Mapping[str, HostFacts],
    choices: DeployChoices,
    size: int,
    measured: Mapping[str, int | None],
    hub_revision: str | None = None,
) -> list[Finding]:
    """Per node: the weights complete, or what is wrong with the copy and whether the disk
    holds a new one; `measured` are `du` sizes that win over recon's cache listing;
    `hub_revision` the Hub's current commit of the model when Scout looked it up."""
    head_copy = CacheCopy("unknown")
    if choices.head in hosts:
        head_copy = _cache_copy(choices.head, hosts[choices.head], choices, measured)
    head_wanted = _wanted(choices.head, choices, head_copy, hub_revision)
    head_has = head_copy.state == "cached" and (
        head_copy.size is None or _trouble(head_copy, size, head_wanted) is None
    )
    findings = []
    for host, facts in hosts.items():
        copy = head_copy if host == choices.head else _cache_copy(host, facts, choices, measured)
        wanted = _wanted(host, choices, head_copy, hub_revision)
        if copy.state == "cached" and copy.size is None and not copy.incomplete:
            findings.append(_size_unknown(host, choices))
            continue
        trouble = _trouble(copy, size, wanted)
        if trouble is None:
            findings.append(_complete(host, choices, copy, wanted))
            continue
        kind, why = trouble
        findings.append(_fetch(host, facts, choices, copy, size, kind, why, head_has))
    return findings


def _trouble(copy: CacheCopy, size: int, wanted: WantedRevision | None) -> tuple[str, str] | None:
    """Which check the copy fails (the finding's kind and its words), None when it is whole."""
    if copy.state == "absent":
        return "weights_not_cached", "not cached"
    if copy.state == "unknown":
        return "weights_not_cached", "not known to be cached"
    if copy.incomplete:
        files = f"{copy.incomplete} file{'s' * (copy.incomplete > 1)}"
        return (
            "weights_unfinished",
            f"unfinished ({files} still blobs/*.incomplete: a download under way or interrupted)",
        )
    if copy.size is not None and copy.size < size * COMPLETE_FRACTION:
        return "weights_not_cached", f"only partly cached ({gb(copy.size)} of {gb(size)})"
    if wanted is not None and copy.revision != wanted.commit:
        held = f"revision {short(copy.revision)}" if copy.revision else "no refs/main"
        return "weights_old_revision", f"at {held}, {wanted.whose} is {short(wanted.commit)}"
    return None


def _complete(
    host: str, choices: DeployChoices, copy: CacheCopy, wanted: WantedRevision | None
) -> Finding:
    at = f" at {short(copy.revision)}" if copy.revision else ""
    if wanted is not None:
        checked = f"{wanted.whose} revision, none unfinished"
    elif copy.revision is not None:
        checked = "none unfinished; size checked, not the revision: the Hub's is not known"
    else:
        checked = "size checked only: no revision read"
    return _weights_finding(
        "ok",
        "weights_cached",
        f"{choices.model} cached on {host} ({gb(copy.size or 0)}{at}, {checked})",
        [host],
    )


def _size_unknown(host: str, choices: DeployChoices) -> Finding:
    return _weights_finding(
        "warning",
        "weights_size_unknown",
        f"{choices.model} is in the HF cache on {host} but its size is unknown (no `du` there)",
        [host],
        fix=f"check the download is complete on {host}: `hf download {choices.model}` "
        "finishes at once when it is",
    )


def _fetch(
    host: str,
    facts: HostFacts,
    choices: DeployChoices,
    copy: CacheCopy,
    size: int,
    kind: str,
    why: str,
    head_has: bool,
) -> Finding:
    """The copy must be fetched (again): a blocker when the disk cannot hold it. Another
    revision's blobs stay until removed, so a new revision needs room for the whole model."""
    free = max((d.available_bytes for d in facts.disk.disks), default=None)
    kept = 0 if kind == "weights_old_revision" else (copy.size or 0)
    needed = (size - kept) * DISK_MARGIN
    verb = "downloaded" if host == choices.head else "copied"
    if free is not None and free < needed:
        return _weights_finding(
            "blocker",
            "disk_too_small",
            f"{_subject(choices.model, host, why)} and only {gb(free)} is free (needs "
            f"{gb(needed)})",
            [host],
            fix="free disk space or point hf_cache at a larger disk",
        )
    if copy.state == "cached" and kind != "weights_not_cached":
        message = f"{_subject(choices.model, host, why)}: {verb} again"
    else:
        message = f"{_subject(choices.model, host, why)}; the engine runs with HF_HUB_OFFLINE=1"
    return _weights_finding(
        "warning", kind, message, [host], fix=_fetch_fix(host, choices, head_has)
    )


def _subject(model: str, host: str, why: str) -> str:
    """ "M is not cached on H" for a copy that is not there, "M on H is unfinished (…)" for one
    that is there but fails a check."""
    if why.startswith(("not ", "only ")):
        return f"{model} is {why} on {host}"
    return f"{model} on {host} is {why}"


def _fetch_fix(host: str, choices: DeployChoices, head_has: bool) -> str:
    """What the plan does about a missing copy (tools/deploy/plan/provision.py): download on the
    head, copy from the head to a worker."""
    if host == choices.head:
        return f"the plan downloads it on {host} as a job: `hf download {choices.model}`"
    after = "" if head_has else f", after the download on {choices.head}"
    return f"the plan copies it from {choices.head} to {host} with rsync, as a job{after}"
