"""Many drawn sessions at once, with hypothesis still the judge that shrinks a broken one.

Hypothesis hands out one example at a time, so the fast path draws first and plays after:
`draw(count, seed)` walks the strategy with the fixed seed and keeps the stories (no session
runs), the world plays them across its lanes at once, and `check` walks the same seed again as
the real property, reading each story's verdict from that run. The walk is deterministic
(fixed seed, no database), so the stories meet again; a story it has no verdict for (a shrink
candidate, once one broke) is played there and then, on its own. A broken verdict fails the
property where it was drawn, and hypothesis shrinks it as it would without the fast path.
"""

from __future__ import annotations

from agent.evaluation.chaos.draw import draw, walk
from agent.evaluation.chaos.harness import ChaosWorld, Verdict
from agent.evaluation.chaos.moves import Story


class Checked:
    """What `check` saw: how many sessions ran at once, how many alone, and every verdict."""

    def __init__(self) -> None:
        self.verdicts: dict[str, Verdict] = {}
        self.at_once = 0
        self.alone = 0


def check(world: ChaosWorld, count: int, at: int) -> Checked:
    """The property over `count` drawn sessions: every verdict empty, a broken one shrunk."""
    checked = Checked()
    drawn = draw(count, at)
    for story, verdict in zip(drawn, world.run_many(drawn), strict=True):
        checked.verdicts[repr(story)] = verdict
    checked.at_once = len(checked.verdicts)

    def judge(story: Story) -> None:
        verdict = checked.verdicts.get(repr(story))
        if verdict is None:
            checked.alone += 1
            verdict = checked.verdicts[repr(story)] = world.run(story)
        assert verdict.broken == [], verdict.broken

    walk(count, at, judge, shrink=True)
    return checked
