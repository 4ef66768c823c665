"""`scout run` end to end: scripted model turns over the real SDK, real tools against the
simulated cluster, approvals from a real signed webhook receiver."""

import io
import json

from agent.faces.headless import EXIT_STOPPED, run_goal
from agent.loop.transcript import read_transcript
from agent.runtime.settings import Settings
from agent.standin.server import MessagesAPIServer
from tests.support.example_receiver import receiver, serving
from tests.support.plans import one_step_plan
from tests.support.session_kit import text_turn, tool_turn

SECRET = "webhook-secret-for-tests-0123456789"
STOP_OLD = {"host": "spark-a", "command": "docker stop vllm_node"}
PLAN = one_step_plan(
    "serve Qwen3.5-122B-A10B-FP8 with TP=2 across spark-a and spark-b",
    title="free the head's memory",
    host="spark-a",
    actions=["docker stop vllm_node", "docker rm vllm_node"],
    expected_downtime="the old vllm_node endpoint stops for good",
    rollback="docker start vllm_node",
    success_check="free -b shows > 100 GB available on spark-a",
).model_dump()
RULES = """\
approve:
  - {tool: propose_plan}
  - {risk: read_only}
deny:
  - {risk: destructive, message: "no destructive steps from CI"}
"""


async def test_headless_plan_gate_and_webhook_denial(cluster, tmp_path):
    inventory = cluster.write_inventory(tmp_path / "sim" / "inventory.yaml")
    rules = tmp_path / "rules.yaml"
    rules.write_text(RULES)
    script = [
        tool_turn([("toolu_1", "ssh_exec", STOP_OLD)], text="Stopping the old server first."),
        tool_turn([("toolu_2", "propose_plan", PLAN)]),
        tool_turn([("toolu_3", "ssh_exec", STOP_OLD)]),
        text_turn("The webhook denied stopping vllm_node, so I stopped here."),
    ]
    server = receiver.make_server(
        "127.0.0.1", 0, SECRET.encode(), receiver.RulesDecider.from_file(rules), log=io.StringIO()
    )
    out, err = io.StringIO(), io.StringIO()
    with MessagesAPIServer(script) as api, serving(server) as hook_url:
        settings = Settings(
            api_key="test",
            base_url=api.url,
            inventory=inventory,
            transcripts_dir=tmp_path / "transcripts",
            log_file=tmp_path / "scout.log",
        )
        code = await run_goal(
            settings,
            "replace the old vLLM with Qwen3.5 across both Sparks",
            approvals="webhook",
            webhook_url=hook_url,
            webhook_secret=SECRET,
            out=out,
            err=err,
        )
        posts = [r.body for r in api.requests if r.path == "/v1/messages"]

    assert code == EXIT_STOPPED, err.getvalue()
    # before the plan: refused by the plan gate, and the model is told why
    before = posts[1]["messages"][-1]["content"][0]
    assert before["is_error"] and "no plan has been approved" in before["content"]
    # the plan was approved through the webhook
    plan_result = posts[2]["messages"][-1]["content"][0]
    assert not plan_result.get("is_error") and "Plan approved" in plan_result["content"]
    # the destructive step was denied by the webhook; the next request carries the denial
    denied = posts[3]["messages"][-1]["content"][0]
    assert denied["tool_use_id"] == "toolu_3" and denied["is_error"]
    assert "no destructive steps from CI" in denied["content"]
    # nothing was stopped on the head
    containers = cluster.host_state("spark-a")["docker"]["containers"]
    assert containers["vllm_node"]["state"] == "running"

    events = [json.loads(line) for line in out.getvalue().splitlines()]
    decisions = [e for e in events if e["type"] == "approval_decision"]
    assert [d["decision"] for d in decisions] == ["approved", "denied"]
    assert decisions[1]["message"] == "no destructive steps from CI"
    assert sum(e["type"] == "model_request" for e in events) == 4
    transcript = next((tmp_path / "transcripts").glob("*.jsonl"))
    recorded = read_transcript(transcript).events
    assert [e.type for e in recorded] == [e["type"] for e in events]
    assert SECRET not in transcript.read_text()


async def test_ci_approvals_deny_what_needs_a_human(cluster, tmp_path):
    inventory = cluster.write_inventory(tmp_path / "sim" / "inventory.yaml")
    script = [tool_turn([("toolu_1", "propose_plan", PLAN)]), text_turn("No plan in ci mode.")]
    with MessagesAPIServer(script) as api:
        settings = Settings(
            api_key="test",
            base_url=api.url,
            inventory=inventory,
            transcripts_dir=tmp_path / "t",
            log_file=tmp_path / "scout.log",
        )
        code = await run_goal(
            settings,
            "go",
            approvals="ci",
            webhook_url=None,
            webhook_secret=None,
            out=io.StringIO(),
            err=io.StringIO(),
        )
        posts = [r.body for r in api.requests if r.path == "/v1/messages"]
    assert code == 0
    result = posts[1]["messages"][-1]["content"][0]
    assert result["is_error"] and "ci mode" in result["content"]


STEPS_RULES = """\
approve:
  - {tool: propose_plan, approve_steps: true}
"""


async def test_a_webhook_can_approve_the_plan_with_its_steps(cluster, tmp_path):
    inventory = cluster.write_inventory(tmp_path / "sim" / "inventory.yaml")
    rules = tmp_path / "rules.yaml"
    rules.write_text(STEPS_RULES)
    script = [
        tool_turn([("toolu_1", "propose_plan", PLAN)]),
        tool_turn([("toolu_2", "ssh_exec", STOP_OLD)]),
        tool_turn([("toolu_3", "ssh_exec", {"host": "spark-a", "command": "docker rm vllm_node"})]),
        text_turn("The old server is gone."),
    ]
    server = receiver.make_server(
        "127.0.0.1", 0, SECRET.encode(), receiver.RulesDecider.from_file(rules), log=io.StringIO()
    )
    out, err = io.StringIO(), io.StringIO()
    with MessagesAPIServer(script) as api, serving(server) as hook_url:
        settings = Settings(
            api_key="test",
            base_url=api.url,
            inventory=inventory,
            transcripts_dir=tmp_path / "transcripts",
            log_file=tmp_path / "scout.log",
        )
        code = await run_goal(
            settings,
            "remove the old vLLM",
            approvals="webhook",
            webhook_url=hook_url,
            webhook_secret=SECRET,
            out=out,
            err=err,
        )
    assert code == 0, err.getvalue()
    events = [json.loads(line) for line in out.getvalue().splitlines()]
    decisions = [e for e in events if e["type"] == "approval_decision"]
    assert [(d["decided_by"], d["approve_steps"]) for d in decisions] == [
        (str(rules), True),
        ("plan approval", False),
        ("plan approval", False),
    ]
    assert "vllm_node" not in cluster.host_state("spark-a")["docker"]["containers"]
