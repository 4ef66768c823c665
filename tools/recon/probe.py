"""The probe pack: one shell script per host, one SSH round trip, output cut into marked sections.

The script is plain POSIX sh that also runs in the simulator's restricted bash: no file
redirections (only `2>&1`, a descriptor copy), no `cd`, no command names with slashes. Each
section prints a start marker, the tool's output (stderr merged) and an end marker with the
tool's exit status, so a missing tool only blanks its own section.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import TYPE_CHECKING

from tools.recon.sections import (
    DAEMON_CHECK,
    NEEDS_DAEMON,
    OUTSIDE_SECTIONS,
    SECTION_GROUPS,
    SECTIONS,
    Section,
)
from tools.ssh.errors import SSHError
from tools.wall.command import HELPER_PATH, WallSpec

if TYPE_CHECKING:
    from tools.ssh.pool import SSHPool
    from tools.ssh.remote_command import CommandResult
    from tools.world.facts import HostFacts

PROBE_TIMEOUT_S = 90.0
# The probe pack runs inside the wall with a scratch folder (TMPDIR) for tools that keep
# temporary files; it needs no network (`ray status`, whose GCS may listen on the node's own
# address, is one of the sections that run beside the wall: OUTSIDE_SECTIONS).
PROBE_WALL = WallSpec(scratch=True)
# Whether it ran inside the wall (the wall's parts, Landlock's ABI among them), the kernel, and
# whether it has seccomp and Scout's helper. Plain reads only: the probe pack must stay what the
# classifier calls read-only (tests/unit/test_policy_corpus.py).
WALL_COMMAND = (
    f'echo "inside=${{SCOUT_WALL:-}}"; echo "kernel=$(uname -r)"; '
    "grep -q '^Seccomp:' /proc/self/status && echo seccomp=yes || echo seccomp=no; "
    f'H="{HELPER_PATH}"; if [ -r "$H" ]; then echo helper=present; else echo helper=absent; fi'
)
SECTION_START = "@@scout:section {name}@@"
SECTION_END = "@@scout:status {name} {status}@@"
_START = re.compile(r"^@@scout:section (?P<name>[^@]+)@@$")
_END = re.compile(r"^@@scout:status (?P<name>[^@]+) (?P<status>\d+)@@$")


# where DAEMON_CHECK's exit status waits for the sections that need the daemon (NEEDS_DAEMON)
DAEMON_STATUS = "docker_status"


def _section_lines(name: str, command: str) -> list[str]:
    if name == DAEMON_CHECK:  # its status, kept for the sections that need the daemon
        return [
            f'echo "{SECTION_START.format(name=name)}"',
            f"{{ {command} ; }} 2>&1; {DAEMON_STATUS}=$?",
            f'echo "{SECTION_END.format(name=name, status="$" + DAEMON_STATUS)}"',
        ]
    lines = [
        f'echo "{SECTION_START.format(name=name)}"',
        f"{{ {command} ; }} 2>&1",
        f'echo "{SECTION_END.format(name=name, status="$?")}"',
    ]
    if name in NEEDS_DAEMON:
        return [f'if [ "${DAEMON_STATUS}" = 0 ]; then ' + "; ".join(lines) + "; fi"]
    return lines


def _unit(group: list[tuple[str, str]]) -> str:
    """A group's sections one after another."""
    return "; ".join(line for name, command in group for line in _section_lines(name, command))


def _units(groups: list[list[tuple[str, str]]]) -> list[str]:
    """One unit per group; the groups holding sections that need the daemon (NEEDS_DAEMON)
    become one unit that runs DAEMON_CHECK first, then them at once, in the place of the first
    of them."""
    check = [(n, c) for group in groups for n, c in group if n == DAEMON_CHECK]
    groups = [[(n, c) for n, c in group if n != DAEMON_CHECK] for group in groups]
    waiting = [i for i, group in enumerate(groups) if any(n in NEEDS_DAEMON for n, _ in group)]
    units = [_unit(group) for group in groups]
    if check and waiting:
        units[waiting[0]] = _unit(check) + "; " + _all_at_once([units[i] for i in waiting])
        units = [unit for i, unit in enumerate(units) if i not in waiting[1:]]
    elif check:
        units.insert(0, _unit(check))
    return [unit for unit in units if unit]


def _all_at_once(units: list[str]) -> str:
    """Run every unit at the same time, each one's output printed whole, never interleaved.

    `{ A; } | { B; cat; }` runs A and B together; A's output waits in the pipe (a writer past
    the pipe's 64 KiB pauses until it is read) while B prints, then `cat` prints it. Nested
    once per unit, the last unit prints first and the first last, so a unit that hangs holds
    back only the units before it. No files, no redirections: it runs in the simulator's
    restricted shell. A unit must not read stdin, which is the pipe of the unit outside it.
    """
    script = units[-1]
    for unit in reversed(units[:-1]):
        script = f"{{ {unit}; }} | {{\n{script}\ncat; }}"
    return script


def build_probe_script(part: str = "all") -> str:
    """The probe as one script (`part`: "all", or "inside" / "outside" the wall, see
    OUTSIDE_SECTIONS), its section groups at once (SECTION_GROUPS); the docker reads that need
    the daemon only where `docker version` reached it (NEEDS_DAEMON), ethtool once per RDMA
    netdev that ibdev2netdev names, and the wall's own section inside."""
    chosen = [
        (name, command)
        for name, command in SECTIONS
        if part == "all" or (name in OUTSIDE_SECTIONS) == (part == "outside")
    ]
    grouped = set().union(*SECTION_GROUPS)
    groups = [[(n, c) for n, c in chosen if n in group] for group in SECTION_GROUPS]
    groups.append([(n, c) for n, c in chosen if n not in grouped])
    units = _units(groups)
    if part != "outside":
        units.append(
            "ibdev2netdev 2>&1 | while read dev word port arrow netdev state; do "
            'if [ "$arrow" = "==>" ]; then '
            + "; ".join(_section_lines("ethtool $netdev", 'ethtool "$netdev"'))
            + "; fi; done; "
            + "; ".join(_section_lines("wall", WALL_COMMAND))
        )
    return _all_at_once(units) + "\n"


def split_sections(stdout: str, walled: bool = False) -> dict[str, Section]:
    """Sections by name; a section cut off (timeout, dropped link) has `exit_status` None;
    `walled`: they ran inside the wall."""
    sections: dict[str, Section] = {}
    current: str | None = None
    body: list[str] = []
    for line in stdout.splitlines():
        start, end = _START.match(line), _END.match(line)
        if start is not None:
            if current is not None:
                sections[current] = Section(current, "\n".join(body), None, walled)
            current, body = start["name"], []
        elif end is not None and current == end["name"]:
            sections[current] = Section(current, "\n".join(body), int(end["status"]), walled)
            current, body = None, []
        elif current is not None:
            body.append(line)
    if current is not None:
        sections[current] = Section(current, "\n".join(body), None, walled)
    return sections


class ProbeError(SSHError):
    """The probe ran but printed no sections at all (the shell refused it, or it was killed)."""


async def probe_host(
    pool: SSHPool, host: str, *, timeout: float = PROBE_TIMEOUT_S, wall: bool = True
) -> HostFacts:
    """Run the probe pack on `host` inside the wall (without, where the host cannot build one:
    the pack is Scout's own and runs anyway) and turn its output into facts; SSH failures raise
    SSHError. Its sections that need a daemon's socket or another process's /proc entries
    (OUTSIDE_SECTIONS) run beside it, outside the wall: fixed reads of Scout's own, whose
    facts would be false inside it."""
    import asyncio  # here: `scout recon` builds the script and reads its output without it

    script = build_probe_script("inside")
    collected_at = datetime.now(UTC)
    result, outside = await asyncio.gather(
        pool.run(host, script, timeout=timeout, wall=PROBE_WALL if wall else None),
        pool.run(host, build_probe_script("outside"), timeout=timeout),
    )
    unwalled = why_unwalled(result)
    if unwalled is not None:
        result = await pool.run(host, script, timeout=timeout)
    return host_facts(host, result, outside, collected_at, unwalled)


def why_unwalled(inside: CommandResult) -> str | None:
    """Why the inside part did not run inside the wall (then it must run again without), or
    None: it ran there, or it was never meant to."""
    if inside.walled and not split_sections(inside.stdout) and not inside.timed_out:
        said = (inside.stderr or inside.stdout).strip().splitlines()  # python3 cannot run it
        return f"the wall helper did not start ({said[-1][:160] if said else 'no output'})"
    return inside.unwalled


def host_facts(
    host: str,
    inside: CommandResult,
    outside: CommandResult,
    collected_at: datetime,
    unwalled: str | None,
) -> HostFacts:
    """The facts of the probe's two parts, however they reached the host; ProbeError where
    the inside part printed no sections."""
    sections = split_sections(inside.stdout, inside.walled)
    if sections:
        sections = {**split_sections(outside.stdout), **sections}
    if not sections:
        said = (inside.stderr or inside.stdout).strip()[:300] or "nothing"
        raise ProbeError(
            f"the recon probe on {host} printed no sections (exit status {inside.exit_status}"
            f"{', timed out' if inside.timed_out else ''}); it said: {said}. Check that `sh` "
            "works on the host for this user."
        )
    # the parsers load once the host has answered: `scout recon` imports them meanwhile
    from tools.recon.probe_parse import facts_from_sections

    return facts_from_sections(host, sections, collected_at, unwalled)


@dataclass
class ProbeRound:
    """One parallel probe: facts from the hosts that answered, a message for each that did not."""

    facts: dict[str, HostFacts] = field(default_factory=dict)
    failures: dict[str, str] = field(default_factory=dict)

    def record(self, host: str, outcome: HostFacts | BaseException) -> None:
        """One host's facts, or its failure as a message (an SSHError's own words)."""
        if isinstance(outcome, SSHError):
            self.failures[host] = str(outcome)
        elif isinstance(outcome, Exception):
            kind = type(outcome).__name__
            self.failures[host] = f"recon of {host} failed: {kind}: {outcome}"
        elif isinstance(outcome, BaseException):
            raise outcome
        else:
            self.facts[host] = outcome


async def probe_hosts(
    pool: SSHPool, hosts: list[str], *, timeout: float = PROBE_TIMEOUT_S, wall: bool = True
) -> ProbeRound:
    """Probe every host at once; one host failing never stops the others."""
    import asyncio

    results = await asyncio.gather(
        *(probe_host(pool, host, timeout=timeout, wall=wall) for host in hosts),
        return_exceptions=True,
    )
    probe_round = ProbeRound()
    for host, outcome in zip(hosts, results, strict=True):
        probe_round.record(host, outcome)
    return probe_round
