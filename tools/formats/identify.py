"""Which format a pasted text is in, by the formats' own signs, and its reading.

Every format scores the text (format.py); those at the threshold are tried best first, and the
first whose reader accepts the text wins. A text no format recognises is "no reader for this",
with the format it came closest to, so a person can see what Scout took it for.
"""

from __future__ import annotations

import re

from tools.formats import docker, fabric, gpu, jobs, network, system
from tools.formats.format import RECOGNISED, Format, Reading, Unread
from tools.recon.parsers.errors import ParseError

FORMATS: tuple[Format, ...] = (
    *gpu.FORMATS,
    *fabric.FORMATS,
    *network.FORMATS,
    *docker.FORMATS,
    *system.FORMATS,
    *jobs.FORMATS,
)
# A shell's exit-status note after the output, as capture scripts append it.
_EXIT_NOTE = re.compile(r"^# exit -?\d+\s*$", re.M)
# Where one output ends and the next begins in a paste of several: a `---` rule a person put
# between them, or the prompt line of the next command.
_BETWEEN = re.compile(r"^(?:-{3,}|[\w.-]+@[\w.-]+:\S*[$#] .*|\$ .*)$", re.M)


def read_pasted(text: str) -> Reading | Unread:
    """The reading of `text` as one output; failing that, of each output a paste of several
    holds (any that no reader knows is named as such), else the closest format."""
    text = _EXIT_NOTE.sub("", text.replace("\r\n", "\n"))
    whole = read_one(text)
    parts = [part for part in _BETWEEN.split(text) if part.strip()]
    if isinstance(whole, Reading) or len(parts) < 2:
        return whole
    readings = [read_one(part) for part in parts]
    read = [r for r in readings if isinstance(r, Reading)]
    if not read:
        return whole
    facts: dict[str, object] = {}
    findings: list[str] = []
    for number, reading in enumerate(readings, 1):
        if isinstance(reading, Unread):
            findings.append(f"output {number}: no reader for this")
            continue
        facts.update({f"[{number}] {key}": value for key, value in reading.facts.items()})
        findings += [f"[{number}] {finding}" for finding in reading.findings]
    names = dict.fromkeys(reading.format for reading in read)
    return Reading(f"{len(parts)} outputs: {', '.join(names)}", facts, findings)


def read_one(text: str) -> Reading | Unread:
    """The reading of the best format that recognises and reads `text`, else the closest."""
    scored = sorted(
        ((fmt.score(text), order, fmt) for order, fmt in enumerate(FORMATS)),
        key=lambda item: (-item[0], item[1]),
    )
    for score, _order, fmt in scored:
        if score < RECOGNISED:
            break
        try:
            facts, findings = fmt.read(text)
        except (ParseError, ValueError):
            continue
        return Reading(fmt.name, facts, findings)
    best_score, _order, best = scored[0]
    return Unread(best.name if best_score > 0 else None)
