"""The scenarios `scout eval` runs a planner on: a simulated cluster, a goal, the right outcome.

A correct planner serves a scenario marked `serve`; on one marked `refuse` the cluster cannot
serve the goal as it stands, and the right answer is to say so and change nothing. Kept apart
from the evaluation itself so `scout --help` names them without loading the simulator.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

Expect = Literal["serve", "refuse"]
MODEL = "Qwen/Qwen3.5-122B-A10B-FP8"
PAIR_GOAL = f"Serve {MODEL} with tensor parallelism 2 across spark-a and spark-b."


@dataclass(frozen=True)
class Scenario:
    name: str  # the simulator's scenario (sim/scenarios/NAME.yaml)
    goal: str
    expect: Expect
    recording: str | None = None  # the bundled recording made on it, if any


SCENARIOS = [
    Scenario("seed-pair", PAIR_GOAL, "serve", "seed-pair-deploy"),
    Scenario("fresh-pair", PAIR_GOAL, "serve", "fresh-pair-deploy"),
    Scenario("link-local-pair", PAIR_GOAL, "serve"),
    Scenario("small-disk", PAIR_GOAL, "refuse"),  # 40 GB free for 119 GB of weights
    Scenario("gated-model", PAIR_GOAL, "refuse"),  # a gated repository and no HF token
    Scenario("host-key-gap", PAIR_GOAL, "serve"),
    Scenario(
        "spark-trio",
        f"Serve {MODEL} across spark-a, spark-b and spark-c.",
        "serve",
        "spark-trio-deploy",
    ),
    Scenario("roce-unfixable", PAIR_GOAL, "refuse"),  # a degraded fabric a person must reseat
]
