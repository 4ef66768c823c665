"""How a long session's requests grow, with Scout's compaction and without it.

A scripted 60-turn session on the simulated seed pair: the demo's turns (recon and the guide,
the plan and its approval, the rollout, the proof; scripts/record_demo.py) with 46 probing
turns before the last two, as an operator's agent checks a fresh deployment: `nvidia-smi -q`,
`ip -d addr`, `lscpu`, `/proc/meminfo`, `docker inspect`, logs, on both hosts at once, two or
three calls a turn. Every tool runs for real against the simulator; the model's turns go
through the real anthropic SDK and the local Messages-API server (strict, as everywhere).

Each request the SDK sent is counted with the server's documented estimate
(agent/loop/token_estimate.py: about four characters a token). The same script runs twice:
with the default settings, and with `compact_history` off. Goals: compacted/uncompacted ≤ 0.35,
and the last request at most twice the mean of the first ten.

    .venv/bin/python bench/session_growth.py
"""

from __future__ import annotations

import asyncio
import importlib.util
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from agent.loop.accounting import Usage  # noqa: E402
from agent.loop.model_client import AnthropicClient  # noqa: E402
from agent.loop.token_estimate import estimate_input_tokens  # noqa: E402
from agent.replay.redrive import sim_runtime  # noqa: E402
from agent.safety.approvers.scripted import ScriptedApprover  # noqa: E402
from agent.standin.server import MessagesAPIServer  # noqa: E402

TURNS = 60
BOTH = ["spark-a", "spark-b"]
# (what the model says, [(command, hosts)]) — read-only probes, cycled through
PROBES: list[tuple[str, list[tuple[str, list[str]]]]] = [
    ("Full GPU and memory state on both nodes.", [("nvidia-smi -q; cat /proc/meminfo", BOTH)]),
    ("Interfaces, link counters and RDMA ports.", [("ip -d addr; ip -s link; ibstat", BOTH)]),
    ("CPU inventory on both.", [("lscpu; cat /proc/cpuinfo", BOTH)]),
    (
        "The serving container and its logs.",
        [("docker inspect scout-vllm; docker logs --tail 400 scout-vllm", ["spark-a"])],
    ),
    ("Processes, sockets and routes.", [("ps aux; ss -ltnp; ip route", BOTH)]),
    (
        "GPU summary, disks and memory, and the Ray cluster.",
        [("nvidia-smi; df -h; free -h", BOTH), ("docker exec scout-vllm ray status", ["spark-a"])],
    ),
]


def load_demo_script() -> Any:
    spec = importlib.util.spec_from_file_location("record_demo", ROOT / "scripts/record_demo.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up while it loads
    spec.loader.exec_module(module)
    return module


async def demo_turns(demo: Any) -> list[dict[str, Any]]:
    """The seed-pair demo's scripted model turns, planned against the sim as when recorded."""
    story = demo.STORIES["seed-pair-deploy"]
    return story.script(await demo.plan_for(story))


def probing_turn(number: int) -> dict[str, Any]:
    text, commands = PROBES[number % len(PROBES)]
    content: list[dict[str, Any]] = [{"type": "text", "text": f"Probe {number + 1}: {text}"}]
    for index, (command, hosts) in enumerate(commands):
        target = {"host": hosts[0]} if len(hosts) == 1 else {"hosts": hosts}
        content.append(
            {
                "type": "tool_use",
                "id": f"toolu_p{number:02d}_{index}",
                "name": "ssh_exec",
                "input": {**target, "command": command},
            }
        )
    return {"turn": {"content": content, "stop_reason": "tool_use"}}


async def run_session(
    script: list[dict[str, Any]], settings: dict[str, Any]
) -> tuple[list[int], Usage]:
    """The request sizes (estimated tokens) of one run, in order, and the session's usage."""
    approver = ScriptedApprover([("approved", "")] * 12, name="operator")
    goal = load_demo_script().STORIES["seed-pair-deploy"].goal
    with MessagesAPIServer(script, model="claude-sonnet-4-5") as api:
        client = AnthropicClient(api_key="bench", base_url=api.url, max_retries=0)
        async with sim_runtime(
            "seed-pair",
            client=client,
            approver_factory=lambda rules: approver,
            model="claude-sonnet-4-5",
            settings={"max_turns": 100, **settings},
        ) as runtime:
            outcome = await runtime.session.send(goal)
            usage = runtime.session.usage
        await client.close()
        sizes = [estimate_input_tokens(r.body) for r in api.requests if r.served == "turn"]
        refused = [r.served for r in api.requests if r.served != "turn"]
    if outcome.stop != "end_turn" or refused or len(sizes) != TURNS:
        raise SystemExit(f"the session did not run as scripted: {outcome}, refused {refused}")
    return sizes, usage


async def main() -> None:
    story = await demo_turns(load_demo_script())
    probes = [probing_turn(n) for n in range(TURNS - len(story))]
    script = [*story[:-2], *probes, *story[-2:]]
    compacted, usage = await run_session(script, {})
    uncompacted, plain = await run_session(script, {"compact_history": False})
    print(f"{'turn':>4} {'compacted':>10} {'uncompacted':>12}  (request tokens, estimate)")
    for turn in (1, 10, 20, 30, 40, 50, 60):
        print(f"{turn:>4} {compacted[turn - 1]:>10} {uncompacted[turn - 1]:>12}")
    for name, run in (("compacted", usage), ("uncompacted", plain)):
        print(
            f"{name}: cache reads {run.cache_read_input_tokens / run.prompt_tokens:.0%} of input, "
            f"writes {run.cache_creation_input_tokens / run.prompt_tokens:.0%} "
            f"(the server's cache model); {run.compacted.compactions} compactions, "
            f"{run.compacted.results} results compacted"
        )
    total = sum(compacted)
    ratio = total / sum(uncompacted)
    growth = compacted[-1] / (sum(compacted[:10]) / 10)
    print(
        f"session {TURNS} turns: input {total / 1e6:.2f}M tokens, compacted/uncompacted "
        f"{ratio:.2f}, last/first-10 request {growth:.2f}"
    )


if __name__ == "__main__":
    asyncio.run(main())
