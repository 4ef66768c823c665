"""Record agent/transcripts/seed-pair-deploy.jsonl: the demo's session, from recon to tokens/s.

The model's turns here are written by Scout's engineers (what a careful model would send), served
through the real anthropic SDK by the local Messages-API server (strict: it refuses what the real
API refuses); every tool runs for real against a fresh simulated seed-pair cluster, and an
approver answers yes to every gated step. A first pass asks `plan_deployment` for the plan so the
scripted `propose_plan` carries it word for word. The usage recorded for each turn is the
server's count of the request Scout actually sent, marked as an estimate; nothing is made up.

    .venv/bin/python scripts/record_demo.py [OUTPUT]
"""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from agent.faces.demo import DEMO_GOAL, DEMO_SCENARIO
from agent.loop.model_client import AnthropicClient
from agent.replay.redrive import sim_runtime
from agent.replay.server import MessagesAPIServer
from agent.safety.approvers.scripted import ScriptedApprover

REPO = Path(__file__).resolve().parent.parent
DEMO_TRANSCRIPT = REPO / "agent" / "transcripts" / "seed-pair-deploy.jsonl"
MODEL = "Qwen/Qwen3.5-122B-A10B-FP8"
GUIDE = "http://docs.spark.sim/vllm-two-sparks.html"
PLAN_INPUT = {"model": MODEL, "hosts": ["spark-a", "spark-b"], "model_size_gb": 119}
STEPS = [
    "Recon both Sparks and read the two-node guide",
    "Propose a plan",
    "Free spark-a's memory and bring spark-b's RoCE link up",
    "Start the Ray cluster on both nodes",
    "Serve the model with TP=2 and measure it",
]
WAIT_READY = "timeout 600 sh -c 'until curl -sf localhost:8000/health; do sleep 2; done'"


def todo(done: int) -> dict[str, Any]:
    items = []
    for index, content in enumerate(STEPS):
        status = "completed" if index < done else "in_progress" if index == done else "pending"
        items.append({"content": content, "status": status})
    return {"items": items}


def turn(text: str, calls: list[tuple[str, str, dict[str, Any]]], stop: str = "tool_use") -> dict:
    """A scripted reply; its usage is what the server counts of the request it answers."""
    content: list[dict[str, Any]] = [{"type": "text", "text": text}] if text else []
    content += [{"type": "tool_use", "id": i, "name": n, "input": p} for i, n, p in calls]
    return {"turn": {"content": content, "stop_reason": stop}}


def client(url: str) -> AnthropicClient:
    return AnthropicClient(api_key="recording", base_url=url, max_retries=0)


async def plan_for_seed_pair() -> dict[str, Any]:
    """Pass 1: what plan_deployment proposes on a fresh seed-pair."""
    script = [
        turn("", [("p1", "recon", {"hosts": "all", "model_size_gb": 119})]),
        turn("", [("p2", "plan_deployment", PLAN_INPUT)]),
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
            DEMO_SCENARIO,
            client=client(api.url),
            approver_factory=lambda rules: None,
            listeners=[Keep()],
        ) as runtime:
            await runtime.session.send("plan")
    return results["p2"].data["plan"]


def session_script(plan: dict[str, Any]) -> list[dict]:
    steps = plan["steps"]

    def action(step: int, index: int = 0) -> str:
        return steps[step]["actions"][index]

    link_up = " && ".join(steps[1]["actions"])
    wait = f"{WAIT_READY} && echo ready"
    return [
        turn(
            "Before touching anything I'll map both Sparks in one round and read the two-node "
            "guide.",
            [
                ("toolu_01", "todo_write", todo(0)),
                ("toolu_02", "recon", {"hosts": "all", "model_size_gb": 119}),
                ("toolu_03", "web_fetch", {"url": GUIDE}),
            ],
        ),
        turn(
            "Three things stand in the way: `vllm_node` holds about 98 GB of spark-a's unified "
            "memory (29 GB left, and each node needs about 60 GB), spark-b's RoCE link is down, "
            "and the two ConnectX ports share no subnet yet. Both Sparks match otherwise (GB10, "
            "driver 580.95.05, CUDA 13.0, the vLLM 26.05 image). Let me turn that into a plan.",
            [("toolu_04", "plan_deployment", PLAN_INPUT)],
        ),
        turn(
            "Here is the plan for your approval. Stopping `vllm_node` ends whatever it serves; "
            "everything else can be rolled back.",
            [("toolu_05", "todo_write", todo(1)), ("toolu_06", "propose_plan", plan)],
        ),
        turn(
            "Approved. Freeing spark-a's memory and bringing spark-b's link up are independent, "
            "so both go in one batch.",
            [
                ("toolu_07", "todo_write", todo(2)),
                ("toolu_08", "ssh_exec", {"host": "spark-a", "command": action(0)}),
                ("toolu_09", "ssh_exec", {"host": "spark-b", "command": link_up}),
            ],
        ),
        turn(
            "Checking both changes before going on.",
            [
                (
                    "toolu_10",
                    "ssh_exec",
                    {"host": "spark-a", "command": "grep MemAvailable /proc/meminfo"},
                ),
                ("toolu_11", "ssh_exec", {"host": "spark-b", "command": "ibdev2netdev"}),
                (
                    "toolu_12",
                    "ssh_exec",
                    {
                        "hosts": ["spark-a", "spark-b"],
                        "command": "ip -br addr show dev enp1s0f1np1",
                    },
                ),
            ],
        ),
        turn(
            "spark-a has its memory back, spark-b's link is up and both nodes sit on "
            "192.168.100.0/24. Starting the engine containers on both nodes.",
            [
                ("toolu_13", "todo_write", todo(3)),
                ("toolu_14", "ssh_exec", {"host": "spark-a", "command": action(2)}),
                ("toolu_15", "ssh_exec", {"host": "spark-b", "command": action(4)}),
            ],
        ),
        turn(
            "Now the Ray head on spark-a.",
            [("toolu_16", "ssh_exec", {"host": "spark-a", "command": action(3)})],
        ),
        turn(
            "And spark-b joins it.",
            [("toolu_17", "ssh_exec", {"host": "spark-b", "command": action(5)})],
        ),
        turn(
            "Checking that Ray sees both nodes and both GPUs.",
            [
                (
                    "toolu_18",
                    "ssh_exec",
                    {"host": "spark-a", "command": "docker exec scout-vllm ray status"},
                )
            ],
        ),
        turn(
            "Two nodes, two GPUs. Starting vLLM with tensor parallelism 2 over Ray.",
            [
                ("toolu_19", "todo_write", todo(4)),
                ("toolu_20", "ssh_exec", {"host": "spark-a", "command": action(6)}),
            ],
        ),
        turn(
            "Waiting for the server to finish loading.",
            [("toolu_21", "ssh_exec", {"host": "spark-a", "command": wait, "timeout": 660})],
        ),
        turn(
            "It answers. Now the proof: health, the model list, one completion, and a benchmark "
            "through an SSH port forward.",
            [
                (
                    "toolu_22",
                    "endpoint_check",
                    {
                        "host": "spark-a",
                        "port": 8000,
                        "model": MODEL,
                        "concurrency": 4,
                        "max_tokens": 64,
                    },
                )
            ],
        ),
        turn("", [("toolu_23", "todo_write", todo(5))]),
        turn(
            f"Done. `{MODEL}` is served with tensor parallelism 2 across spark-a and spark-b, "
            "with NCCL on the RoCE link (both PCIe twins), at http://spark-a:8000. The "
            "endpoint check above has the measured tokens/s. To roll back: `docker rm -f "
            "scout-vllm` on both nodes, then `docker start vllm_node` on spark-a.",
            [],
            stop="end_turn",
        ),
    ]


async def record(output: Path) -> None:
    plan = await plan_for_seed_pair()
    script = session_script(plan)
    approver = ScriptedApprover([("approved", "")] * 12, name="operator")  # spares go unused
    output.unlink(missing_ok=True)
    with MessagesAPIServer(script, model="claude-sonnet-4-5") as api:
        async with sim_runtime(
            DEMO_SCENARIO,
            client=client(api.url),
            approver_factory=lambda rules: approver,
            model="claude-sonnet-4-5",
            goal=DEMO_GOAL,
            transcript_path=output,
        ) as runtime:
            outcome = await runtime.session.send(DEMO_GOAL)
            runtime.session.end("done" if outcome.stop == "end_turn" else outcome.stop)
    print(f"{outcome.stop}: {outcome.text[:120]}")
    print(f"approvals asked: {len(approver.seen)}; transcript: {output}")


if __name__ == "__main__":
    asyncio.run(record(Path(sys.argv[1]) if len(sys.argv) > 1 else DEMO_TRANSCRIPT))
