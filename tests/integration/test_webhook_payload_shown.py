"""What a webhook receives is what runs: the call redacted, control characters written out."""

from __future__ import annotations

import io

from agent.loop.calls import ToolCall
from agent.loop.executor import Executor
from agent.runtime.settings import Settings
from agent.safety.approvers.webhook import WebhookApprover
from agent.safety.gate import PolicyGate
from agent.safety.shell.judge import judge_shell
from tests.support.example_receiver import receiver, serving
from tests.support.no_hosts import no_hosts
from tools.base import ToolContext
from tools.plans.approval import PlanState
from tools.plans.plan import Plan, PlanStep
from tools.registry import ToolRegistry
from tools.ssh_exec import SSHExec

SECRET = "test-webhook-secret-payload-0c1d"
TOKEN = "hf_" + "Kq7Zp" * 6
PLAN = Plan(
    goal="restart",
    steps=[
        PlanStep(
            title="restart",
            hosts=["spark-a"],
            actions=["docker restart vllm_node"],
            expected_downtime="seconds",
            rollback="none",
            success_check="docker ps",
        )
    ],
)


async def test_the_webhook_payload_is_redacted_and_escaped(tmp_path):
    received: list[dict] = []

    def decide(request: dict) -> dict:
        received.append(request)
        return {"decision": "denied", "message": "looked", "decided_by": "test"}

    server = receiver.make_server("127.0.0.1", 0, SECRET.encode(), decide, log=io.StringIO())
    plan = PlanState()
    plan.approve(PLAN)
    executor = Executor(
        ToolRegistry([SSHExec(no_hosts(), judge_shell)]),
        ToolContext(spill_dir=tmp_path),
        limits=Settings().executor_limits(),
    )
    call = ToolCall(
        "toolu_1",
        "ssh_exec",
        {
            "host": "spark-a",
            "command": "docker restart vllm_node; echo '\x1b[8mhidden\x1b[0m'",
            "env": {"HF_TOKEN": TOKEN},
        },
    )
    with serving(server) as url:
        async with WebhookApprover(url, SECRET, timeout_s=10) as approver:
            gate = PolicyGate(mode="ask", plan=plan, approver=approver)
            verdict = await gate.check(executor.prepare(call))
    assert not verdict.allowed and "looked" in verdict.message
    payload = received[0]
    assert payload["input"]["env"] == {"HF_TOKEN": "[REDACTED]"}
    assert payload["input"]["command"].endswith("echo '\\x1b[8mhidden\\x1b[0m'")
    assert TOKEN not in str(payload) and "\x1b" not in str(payload)
