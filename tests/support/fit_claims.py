"""Every fit-related statement of a session, as the structured claims its findings carry
(tools/world/findings.py `FitClaim`), held against each other: two statements about the same
node, model size, node count and memory fraction must agree on whether it fits now, and on
whether it fits once the same holders stop; and no sentence may say the opposite of its claim.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable

from tools.checks.fit_rule import NodeFit
from tools.world.findings import Finding, FitClaim

# words that say a model fits, or that it does not; a message may not use the other side's
SAYS_FITS = (" fits in ", "would let", "fits beside")
SAYS_SHORT = ("does not fit", "would not fit", "cannot start")


def statements(
    findings: Iterable[Finding], verdicts: Iterable[NodeFit] = ()
) -> list[tuple[str, FitClaim]]:
    """(where it was said, claim) for every claim of the findings and every bare verdict."""
    said = [(f.line(), c) for f in findings for c in f.fit]
    return said + [(f"verdict {v.host}", v.claim()) for v in verdicts]


def disagreements(said: list[tuple[str, FitClaim]]) -> list[str]:
    """What contradicts what; [] when every statement agrees."""
    now: dict[tuple, dict[bool, str]] = defaultdict(dict)
    freed: dict[tuple, dict[str, str]] = defaultdict(dict)
    for where, claim in said:
        asked = round(claim.context_kv_bytes)
        key = (claim.host, claim.nodes, claim.size_bytes, round(claim.utilization, 4), asked)
        now[key].setdefault(claim.state == "fits", where)
        freed[(*key, tuple(sorted(claim.freeing)))].setdefault(claim.state, where)
    found = [f"{key}: {sides}" for key, sides in now.items() if len(sides) > 1]
    found += [f"{key}: {sides}" for key, sides in freed.items() if len(sides) > 1]
    return found


def wrong_words(findings: Iterable[Finding]) -> list[str]:
    """Findings whose sentence says the opposite of the claims they carry."""
    wrong = []
    for finding in findings:
        states = {c.state for c in finding.fit}
        if states == {"short"} and any(w in finding.message for w in SAYS_FITS):
            wrong.append(finding.line())
        if states == {"fits"} and any(w in finding.message for w in SAYS_SHORT):
            wrong.append(finding.line())
        if states and finding.kind == "model_fits" and states != {"fits"}:
            wrong.append(finding.line())
    return wrong
