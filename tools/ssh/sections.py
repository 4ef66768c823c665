"""What the model reads of one command run on many hosts: one section per distinct output.

A fan-out to 32 hosts usually prints the same thing 30 times. Hosts whose exit status, stdout
and stderr are identical share one section that names them all, so the text grows with the
number of different answers, not with the number of hosts; each section's output is cut to a
share of the call's limit (head and tail, the whole text spilled to a file named in it).
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from tools.ssh.errors import (
    AuthError,
    HostKeyError,
    HostUnreachableError,
    SSHError,
    UnknownHostError,
)
from tools.ssh.remote_command import CommandResult
from tools.text.bounded import DEFAULT_LIMIT, bound_text
from tools.wall.denied import COULD_NOT_READ, denied_lines

MIN_SECTION_LIMIT = 1_500
MAX_DENIALS_SHOWN = 10  # lines naming what the wall stopped, in a walled call's section


def failure_kind(error: SSHError) -> str:
    if isinstance(error, UnknownHostError):
        return "unknown host"
    if isinstance(error, HostKeyError):
        return "host key refused"
    if isinstance(error, AuthError):
        return "login refused"
    if isinstance(error, HostUnreachableError):
        return "unreachable"
    return "ssh error"


def output_digest(result: CommandResult | SSHError) -> str:
    """Equal for two hosts exactly when the model would read the same answer from both."""
    if isinstance(result, SSHError):
        key = f"failed\0{failure_kind(result)}\0{result}"
    else:
        key = f"{result.exit_status}\0{result.timed_out}\0{result.stdout}\0{result.stderr}"
    return hashlib.sha256(key.encode("utf-8", "replace")).hexdigest()[:16]


@dataclass
class RenderedOutcomes:
    text: str
    per_host: dict[str, dict[str, object]]
    truncated: bool


def render_outcomes(
    outcomes: dict[str, CommandResult | SSHError],
    timeout: float,
    spill_dir: Path,
    redact: Callable[[str], str] = lambda text: text,
) -> RenderedOutcomes:
    """Group hosts by identical output; one section per group; facts per host for `data`."""
    groups: dict[str, list[str]] = {}
    for host, outcome in outcomes.items():
        groups.setdefault(output_digest(outcome), []).append(host)
    limit = max(MIN_SECTION_LIMIT, DEFAULT_LIMIT // len(groups)) if groups else DEFAULT_LIMIT
    sections: list[str] = []
    per_host: dict[str, dict[str, object]] = {}
    truncated = False
    for hosts in groups.values():
        first = outcomes[hosts[0]]
        if isinstance(first, SSHError):
            sections.append(f"== {_names(hosts)} ({failure_kind(first)}) ==\n{first}")
            for host in hosts:
                failed = outcomes[host]
                per_host[host] = {"error": str(failed), "kind": failure_kind(first)}
            continue
        section, facts = _section(first, hosts, timeout, limit, spill_dir, redact)
        sections.append(section)
        truncated = truncated or bool(facts["truncated"])
        for host in hosts:
            result = outcomes[host]
            duration = result.duration_s if isinstance(result, CommandResult) else 0.0
            per_host[host] = {**facts, "duration_s": round(duration, 3)}
    return RenderedOutcomes("\n\n".join(sections), per_host, truncated)


def _names(hosts: list[str]) -> str:
    return hosts[0] if len(hosts) == 1 else f"{len(hosts)} hosts: {', '.join(hosts)}"


def _section(
    result: CommandResult,
    hosts: list[str],
    timeout: float,
    limit: int,
    spill_dir: Path,
    redact: Callable[[str], str],
) -> tuple[str, dict[str, object]]:
    """One group's part of the text, and its facts for `data`; spill files are written redacted."""
    stdout = bound_text(
        result.stdout,
        limit=limit,
        spill_dir=spill_dir,
        label=f"ssh_exec-{result.host}-stdout",
        redact=redact,
    )
    stderr = bound_text(
        result.stderr,
        limit=max(MIN_SECTION_LIMIT // 2, limit // 2),
        spill_dir=spill_dir,
        label=f"ssh_exec-{result.host}-stderr",
        redact=redact,
    )
    status = f"timed out after {timeout:g} s" if result.timed_out else f"exit {result.exit_status}"
    took = f"{result.duration_s:.2f} s" if len(hosts) == 1 else "same output on each"
    denied = denied_lines(result.stderr) if result.walled else []
    lines = [f"== {_names(hosts)} ({status}, {took}) =="]
    if result.timed_out:
        lines.append(
            f"timed out after {timeout:g} s; the command was killed on the host. "
            "Partial output follows."
        )
    if denied:  # its stdout is what a refused read printed, not the host's state
        lines.append(f"{COULD_NOT_READ}: {denied[0]}")
        lines.append(
            "(the kernel refused part of this read inside the wall, so its output below is not "
            "the host's state; run it as an asked step to read it outside the wall)"
        )
        shown = denied[:MAX_DENIALS_SHOWN]
        lines += [f"stopped by the wall: {line}" for line in shown[1:]]
    lines.append(stdout.text.rstrip("\n") if stdout.text else "(no output)")
    if stderr.text:
        lines += ["-- stderr --", stderr.text.rstrip("\n")]
    if result.truncated:
        lines.append(
            f"[the host sent more than Scout keeps: {result.stdout_omitted_bytes} stdout and "
            f"{result.stderr_omitted_bytes} stderr bytes were dropped from the middle]"
        )
    facts: dict[str, object] = {
        "exit_status": result.exit_status,
        "timed_out": result.timed_out,
        "duration_s": round(result.duration_s, 3),
        "stdout_chars": stdout.total_chars,
        "stderr_chars": stderr.total_chars,
        "truncated": stdout.truncated or stderr.truncated or result.truncated,
        "spill": {
            name: str(bounded.spill_path)
            for name, bounded in (("stdout", stdout), ("stderr", stderr))
            if bounded.spill_path is not None
        },
    }
    return "\n".join(lines), facts
