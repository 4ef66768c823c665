"""Record Scout's bundled sessions, each from recon to tokens/s on a fresh simulated cluster.

The model's turns (scripts/story_turns.py) are written by Scout's engineers (what a careful model
would send), served through the real anthropic SDK by the local Messages-API server (strict: it
refuses what the real API refuses); every tool runs for real against the story's simulated
cluster, and the operator approves the plan with its steps (so the rollout runs without
further questions) and answers yes to anything else that asks. A first pass asks
`plan_deployment` for the plan so the script knows its steps; `propose_plan` proposes it by
its hash. The usage recorded for each turn is the server's count of
the request Scout actually sent, marked as an estimate; nothing is made up.

Stories (transcripts/NAME.jsonl):
- fresh-pair-deploy: the demo; the seed pair from zero: the image pulled and the weights
  downloaded on the head at once (one batch of two rollout_step calls), both copied over the
  fabric to the worker without internet, the fabric measured with all_gather_perf, vLLM's
  multiprocess recipe (no Ray the worker could install); rolled out with rollout_step.
- seed-pair-deploy: two Sparks with the image and weights in place; the old container must go,
  the worker's link come up.
- spark-trio-deploy: three idle Sparks in NVIDIA's ring; the model needs two of them, and the
  plan picks spark-a and spark-b on their own cable; rolled out with rollout_step.

    .venv/bin/python scripts/record_demo.py [STORY] [OUTPUT]
"""

from __future__ import annotations

import argparse
import asyncio
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from agent.faces.demo import DEMO_GOAL
from agent.loop.model_client import AnthropicClient
from agent.replay.redrive import sim_runtime
from agent.safety.approvers.scripted import ScriptedApprover
from agent.standin.server import MessagesAPIServer
from scripts.story_turns import (
    PLAN_INPUT,
    TRIO_PLAN_INPUT,
    fresh_pair_script,
    seed_pair_script,
    spark_trio_script,
    turn,
)

REPO = Path(__file__).resolve().parent.parent
TRANSCRIPTS = REPO / "transcripts"


@dataclass(frozen=True)
class Story:
    """One recorded session: its cluster, the user's goal, what plan_deployment is asked, and
    the model's turns given the plan that call returns."""

    name: str
    scenario: str
    goal: str
    plan_input: dict[str, Any]
    script: Callable[[dict[str, Any]], list[dict]]


def client(url: str) -> AnthropicClient:
    return AnthropicClient(api_key="recording", base_url=url, max_retries=0)


async def plan_for(story: Story) -> dict[str, Any]:
    """Pass 1: what plan_deployment proposes on a fresh copy of the story's cluster."""
    size = story.plan_input["model_size_gb"]
    script = [
        turn("", [("p1", "recon", {"hosts": "all", "model_size_gb": size})]),
        turn("", [("p2", "plan_deployment", story.plan_input)]),
        turn("done", [], stop="end_turn"),
    ]
    results: dict[str, Any] = {}

    class Keep:
        def on_event(self, event: Any) -> None:
            if event.type == "tool_result":
                results[event.id] = event

        def on_text(self, delta: str) -> None: ...

        def on_call_started(self, **kwargs: Any) -> None: ...

    with MessagesAPIServer(script) as api:
        async with sim_runtime(
            story.scenario,
            client=client(api.url),
            approver_factory=lambda rules: None,
            listeners=[Keep()],
        ) as runtime:
            await runtime.session.send("plan")
    return {**results["p2"].data["plan"], "plan_hash": results["p2"].data["plan_hash"]}


STORIES = {
    story.name: story
    for story in (
        Story("seed-pair-deploy", "seed-pair", DEMO_GOAL, PLAN_INPUT, seed_pair_script),
        Story("fresh-pair-deploy", "fresh-pair", DEMO_GOAL, PLAN_INPUT, fresh_pair_script),
        Story(
            "spark-trio-deploy",
            "spark-trio",
            "Serve Qwen/Qwen3.5-122B-A10B-FP8 on as few of the three Sparks as it needs, then "
            "prove it works and how fast it is.",
            TRIO_PLAN_INPUT,
            spark_trio_script,
        ),
    )
}


async def record(story: Story, output: Path) -> None:
    plan = await plan_for(story)
    script = story.script(plan)
    with_steps = {"kind": "approved", "approve_steps": True}
    approver = ScriptedApprover([with_steps, *[("approved", "")] * 16], name="operator")
    output.unlink(missing_ok=True)
    before = set(output.parent.glob("proof-*"))
    with MessagesAPIServer(script, model="claude-sonnet-4-5") as api:
        async with sim_runtime(
            story.scenario,
            client=client(api.url),
            approver_factory=lambda rules: approver,
            model="claude-sonnet-4-5",
            goal=story.goal,
            transcript_path=output,
        ) as runtime:
            outcome = await runtime.session.send(story.goal)
            runtime.session.end("done" if outcome.stop == "end_turn" else outcome.stop)
    for written in set(output.parent.glob("proof-*")) - before:
        written.unlink()  # the proof's chart and JSON, written beside the transcript: not kept
    print(f"{outcome.stop}: {outcome.text[:120]}")
    print(f"approvals asked: {len(approver.seen)}; transcript: {output}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("story", nargs="?", default="fresh-pair-deploy", choices=sorted(STORIES))
    parser.add_argument("output", nargs="?", type=Path, help="default: transcripts/STORY.jsonl")
    args = parser.parse_args()
    story = STORIES[args.story]
    asyncio.run(record(story, args.output or TRANSCRIPTS / f"{story.name}.jsonl"))


if __name__ == "__main__":
    main()
