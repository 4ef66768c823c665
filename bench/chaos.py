"""The chaos model at scale: thousands of drawn sessions, the invariants checked after each.

Each session is a story hypothesis draws (tests/support/chaos/moves.py): tool calls valid and
not, repeated ids, huge and hostile inputs, cut streams, interrupts, plans proposed and never
run, under every approval mode, on one simulated seed pair. Prints sessions per second, each
broken invariant with its story, and as its last line `chaos: B broken of N sessions`.

    .venv/bin/python bench/chaos.py [N] [--seed S] [--no-replay]
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from hypothesis import HealthCheck, Phase, given, seed, settings  # noqa: E402

from tests.support.chaos.harness import ChaosWorld  # noqa: E402
from tests.support.chaos.moves import Story, stories  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("sessions", type=int, nargs="?", default=2000)
    parser.add_argument("--seed", type=int, default=31)
    parser.add_argument("--no-replay", action="store_true", help="skip the replay check")
    args = parser.parse_args()
    broken: list[tuple[Story, list[str]]] = []
    count = 0
    reached = {"plan approved": 0, "changes ran": 0, "hosts changed": 0}
    with ChaosWorld(replay=not args.no_replay) as world:
        started = time.perf_counter()

        @settings(
            max_examples=args.sessions,
            deadline=None,
            database=None,
            phases=[Phase.generate],
            suppress_health_check=list(HealthCheck),
        )
        @seed(args.seed)
        @given(stories())
        def session(story: Story) -> None:
            nonlocal count
            count += 1
            verdict = world.run(story)
            reached["plan approved"] += verdict.plan_approved
            reached["changes ran"] += verdict.changes_ran > 0
            reached["hosts changed"] += verdict.hosts_changed
            if verdict.broken:
                broken.append((story, verdict.broken))
                print(f"broken: {verdict.broken[0][:300]}\n  story: {story!r:.600}", flush=True)
            if count % 100 == 0:
                rate = count / (time.perf_counter() - started)
                print(f"{count} sessions, {rate:.2f} sessions/s", flush=True)

        session()
        elapsed = time.perf_counter() - started
    print(f"{count} sessions in {elapsed:.0f} s: {count / elapsed:.2f} sessions/s")
    print("sessions that reached: " + ", ".join(f"{k} {v}" for k, v in reached.items()))
    print(f"chaos: {len(broken)} broken of {count} sessions")


if __name__ == "__main__":
    main()
