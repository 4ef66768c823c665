"""Preflight's weights check: is the model in each node's HF cache, and if not, can the disk
hold it. The engines run with HF_HUB_OFFLINE=1, so a missing copy fails the launch; the fix each
finding names is what the plan does (download on the head, copy to each worker)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Literal

from tools.checks import Finding, Severity
from tools.deploy.choices import DeployChoices
from tools.deploy.fit import DEFAULT_HF_CACHE, gb
from tools.recon.facts import HostFacts

DISK_MARGIN = 1.1


def _weights_finding(
    severity: Severity, kind: str, message: str, hosts: list[str], fix: str | None = None
) -> Finding:
    return Finding(
        severity=severity, check="weights", kind=kind, hosts=hosts, message=message, fix=fix
    )


CacheState = Literal["cached", "absent", "unknown"]


def _cache_state(
    host: str, facts: HostFacts, choices: DeployChoices, measured: Mapping[str, int | None]
) -> tuple[CacheState, int | None]:
    """Whether the model is in the host's HF cache, and its bytes there (None: not measured).

    A measurement passed in (`du` on a custom hf_cache) wins; else recon's listing of the
    default cache answers.
    """
    if host in measured:
        size = measured[host]
        return ("absent", None) if size is None else ("cached", size)
    listing = facts.hf_cache.models
    if listing is None or choices.hf_cache != DEFAULT_HF_CACHE:
        return "unknown", None
    if choices.model not in listing:
        return "absent", None
    return "cached", listing[choices.model]


def weights_findings(
    hosts: Mapping[str, HostFacts],
    choices: DeployChoices,
    size: int,
    measured: Mapping[str, int | None],
) -> list[Finding]:
    """Per node: the weights cached, or where they are missing and whether the disk holds them;
    `measured` are `du` sizes that win over recon's cache listing."""
    findings = []
    head_has = False  # the head keeps its copy (the plan downloads there only when it lacks it)
    if choices.head in hosts:
        state, cached = _cache_state(choices.head, hosts[choices.head], choices, measured)
        head_has = state == "cached" and (cached is None or _complete(state, cached, size))
    for host, facts in hosts.items():
        state, cached = _cache_state(host, facts, choices, measured)
        if _complete(state, cached, size):
            findings.append(
                _weights_finding(
                    "ok",
                    "weights_cached",
                    f"{choices.model} cached on {host} ({gb(cached)})",
                    [host],
                )
            )
            continue
        if state == "cached" and cached is None:
            findings.append(
                _weights_finding(
                    "warning",
                    "weights_size_unknown",
                    f"{choices.model} is in the HF cache on {host} but its size is unknown "
                    "(no `du` there)",
                    [host],
                    fix=f"check the download is complete on {host}: `hf download {choices.model}` "
                    "finishes at once when it is",
                )
            )
            continue
        free = max((d.available_bytes for d in facts.disk.disks), default=None)
        where = {
            "cached": f"only partly cached ({gb(cached or 0)} of {gb(size)})",
            "absent": "not cached",
            "unknown": "not known to be cached",
        }[state]
        needed = (size - (cached or 0)) * DISK_MARGIN
        if free is not None and free < needed:
            findings.append(
                _weights_finding(
                    "blocker",
                    "disk_too_small",
                    f"{choices.model} is {where} on {host} and "
                    f"only {gb(free)} is free (needs {gb(needed)})",
                    [host],
                    fix="free disk space or point hf_cache at a larger disk",
                )
            )
        else:
            findings.append(
                _weights_finding(
                    "warning",
                    "weights_not_cached",
                    f"{choices.model} is {where} on {host}; the engine runs with HF_HUB_OFFLINE=1",
                    [host],
                    fix=_fetch_fix(host, choices, head_has),
                )
            )
    return findings


def _complete(state: CacheState, cached: int | None, size: int) -> bool:
    return state == "cached" and cached is not None and cached >= size * 0.98


def _fetch_fix(host: str, choices: DeployChoices, head_has: bool) -> str:
    """What the plan does about a missing copy (tools/deploy/provision.py): download on the
    head, copy from the head to a worker."""
    if host == choices.head:
        return f"the plan downloads it on {host} as a job: `hf download {choices.model}`"
    after = "" if head_has else f", after the download on {choices.head}"
    return f"the plan copies it from {choices.head} to {host} with rsync, as a job{after}"
