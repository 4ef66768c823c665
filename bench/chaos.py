"""The chaos model at scale: thousands of drawn sessions, the invariants checked after each.

Each session is a story hypothesis draws (agent/evaluation/chaos/moves.py): tool calls valid and
not, repeated ids, huge and hostile inputs, cut streams, interrupts, plans proposed and never
run, under every approval mode, on a simulated seed pair that session has to itself (lanes
play several at once: agent/evaluation/chaos/harness.py). Prints sessions per second as it goes,
each broken invariant with its story, what the sessions reached, and as its last line
`chaos: B broken of N sessions`.

    .venv/bin/python bench/chaos.py [N] [--seed S] [--lanes L] [--no-replay]
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from agent.evaluation.chaos.draw import draw  # noqa: E402
from agent.evaluation.chaos.harness import ChaosWorld, Verdict  # noqa: E402

CHUNK = 100  # sessions between two progress lines


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("sessions", type=int, nargs="?", default=2000)
    parser.add_argument("--seed", type=int, default=31)
    parser.add_argument("--lanes", type=int, default=6, help="sessions played at once")
    parser.add_argument("--no-replay", action="store_true", help="skip the replay check")
    args = parser.parse_args()
    if args.sessions < 1 or args.lanes < 1:
        parser.error("sessions and lanes must be at least 1")
    stories = draw(args.sessions, args.seed)
    broken = 0
    reached = {"plan approved": 0, "changes ran": 0, "hosts changed": 0}
    with ChaosWorld(replay=not args.no_replay, lanes=args.lanes) as world:
        started = time.perf_counter()
        for first in range(0, len(stories), CHUNK):
            chunk = stories[first : first + CHUNK]
            for story, verdict in zip(chunk, world.run_many(chunk), strict=True):
                broken += _report(story, verdict, reached)
            done = first + len(chunk)
            rate = done / (time.perf_counter() - started)
            print(f"{done} sessions, {rate:.2f} sessions/s", flush=True)
        elapsed = time.perf_counter() - started
    count = len(stories)
    print(f"{count} sessions in {elapsed:.0f} s: {count / elapsed:.2f} sessions/s")
    print("sessions that reached: " + ", ".join(f"{k} {v}" for k, v in reached.items()))
    print(f"chaos: {broken} broken of {count} sessions")


def _report(story: object, verdict: Verdict, reached: dict[str, int]) -> int:
    """Counts what the session reached; prints what broke. 1 when it broke."""
    reached["plan approved"] += verdict.plan_approved
    reached["changes ran"] += verdict.changes_ran > 0
    reached["hosts changed"] += verdict.hosts_changed
    if not verdict.broken:
        return 0
    print(f"broken: {' | '.join(b[:300] for b in verdict.broken)}\n  story: {story!r:.600}")
    return 1


if __name__ == "__main__":
    main()
