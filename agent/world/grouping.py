"""Many hosts, few shapes: hosts with the same facts shown once, findings that repeat said once.

At fleet size most hosts are copies of each other (31 workers with the same GPU, driver, image
and the same link down). Listing each one costs the model ~750 bytes per host on every later
turn and hides the few hosts that differ. Grouping works on what is shown: two hosts belong
together when their rendered facts are equal once their own name, hostname and addresses are set
aside; what was set aside is named ("differ in: hostname, addresses").

Small clusters are left alone: a group needs at least MIN_GROUP hosts, so a pair always reads as
two hosts, and a list of host names is only shortened when the short form is shorter.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field

from tools.checks import Finding

MIN_GROUP = 3
_RUN = 3  # consecutive hosts that read better as "first … last"


def name_span(names: Sequence[str], order: Sequence[str]) -> str:
    """Host names in inventory order, runs of consecutive hosts as `first … last`.

    ["spark-b", …, "spark-af"] → "spark-b … spark-af"; gaps stay visible:
    "spark-a … spark-d, spark-f, spark-g".
    """
    position = {name: i for i, name in enumerate(order)}
    ordered = sorted(names, key=lambda n: (position.get(n, len(order)), n))
    runs: list[list[str]] = []
    for name in ordered:
        last = runs[-1][-1] if runs else None
        if last in position and name in position and position[name] == position[last] + 1:
            runs[-1].append(name)
        else:
            runs.append([name])
    parts = []
    for run in runs:
        parts += [f"{run[0]} … {run[-1]}"] if len(run) >= _RUN else run
    return ", ".join(parts)


def hosts_phrase(names: Sequence[str], order: Sequence[str]) -> str:
    """`N hosts (span)`, the way a group or an aggregated finding names its hosts."""
    return f"{len(names)} hosts ({name_span(names, order)})"


@dataclass
class HostShape:
    """One host as rendered, split into what it shares with its copies and what is its own."""

    name: str
    shared: tuple[str, ...]  # the rendered lines with name, hostname and addresses masked
    own: dict[str, str]  # kind ("hostname", "addresses") → this host's value


@dataclass
class HostGroup:
    """Hosts that read the same; `differ` names the kinds of values that are their own."""

    members: list[str]
    shared: tuple[str, ...]
    differ: list[str] = field(default_factory=list)
    values: dict[str, dict[str, str]] = field(default_factory=dict)  # host → kind → value

    @property
    def single(self) -> bool:
        return len(self.members) == 1


def group_hosts(shapes: Sequence[HostShape]) -> list[HostGroup]:
    """Hosts in the order given, those with equal shared lines gathered into one group (at the
    position of its first member) when there are at least MIN_GROUP of them."""
    by_shape: dict[tuple[str, ...], list[HostShape]] = {}
    for shape in shapes:
        by_shape.setdefault(shape.shared, []).append(shape)
    groups: list[HostGroup] = []
    placed: set[tuple[str, ...]] = set()
    for shape in shapes:
        members = by_shape[shape.shared]
        if len(members) < MIN_GROUP:
            groups.append(HostGroup([shape.name], shape.shared, values={shape.name: shape.own}))
            continue
        if shape.shared in placed:
            continue
        placed.add(shape.shared)
        kinds = [k for k in shape.own if len({m.own.get(k) for m in members}) > 1]
        groups.append(
            HostGroup(
                [m.name for m in members],
                shape.shared,
                differ=kinds,
                values={m.name: m.own for m in members},
            )
        )
    return groups


@dataclass
class FindingLine:
    """A finding as shown: one finding, or several that say the same about different hosts."""

    severity: str
    message: str
    hosts: list[str]
    kind: str


def _masked(finding: Finding) -> str | None:
    """The finding's text with its one host's name as a placeholder, if it names just that host."""
    if len(finding.hosts) != 1:
        return None
    host = finding.hosts[0]
    pattern = rf"(?<![\w.-]){re.escape(host)}(?![\w.-])"
    if not re.search(pattern, finding.text):
        return None
    return re.sub(pattern, "\0", finding.text)


def shorten_host_lists(message: str, order: Sequence[str]) -> str:
    """Replace a comma-separated list of known host names by its span when that is shorter."""
    known = "|".join(re.escape(n) for n in sorted(order, key=len, reverse=True))
    if not known:
        return message
    run = re.compile(rf"(?<![\w.-])(?:{known})(?:, (?:{known}))+(?![\w.-])")

    def shorter(match: re.Match[str]) -> str:
        names = match.group().split(", ")
        short = hosts_phrase(names, order)
        return short if len(short) < len(match.group()) else match.group()

    return run.sub(shorter, message)


def aggregate_findings(findings: Sequence[Finding], order: Sequence[str]) -> list[FindingLine]:
    """Findings in their order; those that differ only in the one host they name become one line
    ("RoCE link down on 31 hosts (spark-b … spark-af): …") when there are MIN_GROUP or more."""
    by_key: dict[tuple[str, str, str], list[Finding]] = {}
    for finding in findings:
        masked = _masked(finding)
        if masked is not None:
            by_key.setdefault((finding.severity, finding.kind, masked), []).append(finding)
    lines: list[FindingLine] = []
    done: set[tuple[str, str, str]] = set()
    for finding in findings:
        masked = _masked(finding)
        key = (finding.severity, finding.kind, masked or "")
        same = by_key.get(key, []) if masked is not None else []
        if len(same) < MIN_GROUP:
            message = shorten_host_lists(finding.text, order)
            lines.append(FindingLine(finding.severity, message, finding.hosts, finding.kind))
            continue
        if key in done:
            continue
        done.add(key)
        hosts = [h for f in same for h in f.hosts]
        message = masked.replace("\0", hosts_phrase(hosts, order)) if masked else ""
        lines.append(FindingLine(finding.severity, message, hosts, finding.kind))
    return lines
