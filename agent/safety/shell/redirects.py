"""Redirections: read-only only when they read, duplicate a descriptor or go to /dev/null."""

from __future__ import annotations

from collections.abc import Callable

from agent.safety.shell.outcomes import Verdict
from agent.safety.shell.paths import (
    device_problem,
    is_harmless_sink,
    is_network_device,
    is_system_path,
    mentions_device,
)
from agent.safety.shell.shell_words import Redirect, RuntimeText
from tools.risk.assessment import Risk

TRUNCATING = frozenset({">", ">|", "&>"})
APPENDING = frozenset({">>", "&>>"})
READING = frozenset({"<", "<<", "<<-", "<<<"})


def judge_redirect(
    redirect: Redirect, target: str, path_exists: Callable[[str], bool | None] | None
) -> list[Verdict]:
    op = redirect.op
    shown = f"{redirect.fd}{op}" if redirect.fd is not None else op
    if op in (">&", "<&") and (target.isdigit() or target == "-"):
        return []
    if op == "<&":
        op = "<"
    if is_network_device(target):
        return [Verdict(Risk.MUTATING, f"'{shown} {target}' opens a network connection")]
    if op in READING:
        runtime = isinstance(target, RuntimeText)
        problem = device_problem(target) if op == "<" and not runtime else None
        if op == "<" and runtime and mentions_device(target):
            problem = "may open a device file named at run time"
        return [Verdict(Risk.MUTATING, f"'{shown} {target}': {problem}")] if problem else []
    if op == ">&":
        op = "&>"
    if is_harmless_sink(target):
        return []
    if isinstance(target, RuntimeText):
        reason = f"'{shown}' writes to a file only known at run time ({target})"
        return [Verdict(Risk.DESTRUCTIVE if op in TRUNCATING else Risk.MUTATING, reason)]
    if is_system_path(target):
        return [Verdict(Risk.DESTRUCTIVE, f"'{shown} {target}' writes into a system path")]
    if op in APPENDING:
        return [Verdict(Risk.MUTATING, f"'{shown} {target}' appends to a file")]
    if op == "<>":
        return [Verdict(Risk.MUTATING, f"'<> {target}' opens a file for writing")]
    exists = path_exists(target) if path_exists else None
    if exists is False:
        return [Verdict(Risk.MUTATING, f"'{shown} {target}' creates a new file")]
    state = "an existing" if exists else "a possibly existing"
    return [Verdict(Risk.DESTRUCTIVE, f"'{shown} {target}' truncates {state} file")]
