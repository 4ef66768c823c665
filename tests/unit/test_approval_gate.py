import pytest
from pydantic import BaseModel

from agent.loop.calls import ToolCall
from agent.loop.executor import Executor
from agent.runtime.settings import Settings
from agent.safety.approvals import fingerprint
from agent.safety.approvers.scripted import ScriptedApprover
from agent.safety.gate import PolicyGate
from agent.safety.rules import ApprovalRule, RuleError, RuleSet
from tests.support.plans import one_step_plan
from tests.support.probe_tools import EchoTool
from tools.base import Reason, Tool, ToolContext, ToolResult
from tools.plans.approval import PlanState, StepApprovals
from tools.plans.plan import Plan, PlanStep
from tools.propose_plan import ProposePlanTool
from tools.registry import ToolRegistry
from tools.risk.assessment import Risk, RiskAssessment
from tools.ssh_exec import SSHExec


class CommandInput(BaseModel):
    host: str
    command: str


class FakeShell(Tool[CommandInput]):
    """Risk by first word, so the gate can be tested apart from the classifier."""

    name = "ssh_exec"
    description = "run a command"
    Input = CommandInput
    rule_shape = SSHExec.rule_shape  # rules read it as they read the real ssh_exec

    def risk(self, params):
        word = params.command.split()[0]
        risk = {"rm": Risk.DESTRUCTIVE, "docker": Risk.MUTATING}.get(word, Risk.READ_ONLY)
        return RiskAssessment(risk, f"{self.name} is {risk.label}")

    def hosts(self, params):
        return [params.host]

    def commands(self, params):
        return [(params.host, params.command)]

    async def run(self, params, ctx):
        RAN.append((params.host, params.command))
        return ToolResult(text="ran")


RAN: list[tuple[str, str]] = []
SHAPES = {FakeShell.name: FakeShell.rule_shape}


def ruleset(config):
    """Rules as the session makes them: held to the shapes its tools declare."""
    return RuleSet.from_config(config, shapes=SHAPES)


PLAN = one_step_plan(
    "serve the model",
    title="start ray head",
    host="spark-a",
    actions=["docker run -d --name ray-head img"],
    rollback="docker rm -f ray-head",
    success_check="ray status shows 1 node",
)


def prepared(command, host="spark-a", tmp_path=None):
    registry = ToolRegistry([FakeShell(), EchoTool()])
    limits = Settings().executor_limits()
    executor = Executor(registry, ToolContext(spill_dir=tmp_path), limits=limits)
    return executor.prepare(ToolCall("c1", "ssh_exec", {"host": host, "command": command}))


def gate(mode="ask", answers=(), rules=None, approved=True):
    events = []
    plan = PlanState()
    if approved:
        plan.approve(PLAN)
    approver = ScriptedApprover(answers, name="tester")
    rules = rules or RuleSet(shapes=SHAPES)
    g = PolicyGate(mode=mode, rules=rules, plan=plan, approver=approver, emit=events.append)
    return g, approver, events


async def test_read_only_runs_without_asking(tmp_path):
    g, approver, _ = gate(approved=False)
    verdict = await g.check(prepared("nvidia-smi", tmp_path=tmp_path))
    assert verdict.allowed and approver.seen == []


async def test_mutating_before_a_plan_is_refused_with_a_pointer_to_propose_plan(tmp_path):
    g, approver, _ = gate(approved=False, answers=[("approved", "")])
    verdict = await g.check(prepared("docker run x", tmp_path=tmp_path))
    assert not verdict.allowed and verdict.reason.kind == "no_plan"
    assert "propose_plan" in verdict.message  # the pointer is the point
    assert approver.seen == []


async def test_after_plan_approval_a_mutating_step_asks_and_names_its_plan_step(tmp_path):
    g, approver, events = gate(answers=[("approved", "go")])
    verdict = await g.check(prepared("docker run -d --name ray-head img", tmp_path=tmp_path))
    assert verdict.allowed
    assert approver.seen[0].plan_step == "step 1: start ray head"
    assert [e.type for e in events] == ["approval_request", "approval_decision"]
    assert events[1].decision == "approved" and events[1].decided_by == "tester"


async def test_denial_reaches_the_model_in_words(tmp_path):
    g, _, _ = gate(answers=[("denied", "not during business hours")])
    verdict = await g.check(prepared("rm -rf /data", tmp_path=tmp_path))
    assert not verdict.allowed
    assert "Denied by tester: not during business hours" in verdict.message


async def test_no_approver_fails_closed(tmp_path):
    plan = PlanState()
    plan.approve(PLAN)
    g = PolicyGate(mode="ask", plan=plan, approver=None)
    verdict = await g.check(prepared("docker run x", tmp_path=tmp_path))
    assert not verdict.allowed and verdict.reason.kind == "unavailable"


async def test_a_crashing_approver_is_a_denial(tmp_path):
    class Broken:
        async def decide(self, request):
            raise ConnectionError("socket closed")

    plan = PlanState()
    plan.approve(PLAN)
    g = PolicyGate(mode="ask", plan=plan, approver=Broken())
    verdict = await g.check(prepared("docker run x", tmp_path=tmp_path))
    assert not verdict.allowed and "socket closed" in verdict.message


async def test_plan_mode_runs_only_read_only(tmp_path):
    g, approver, _ = gate(mode="plan", answers=[("approved", "")])
    assert not (await g.check(prepared("docker run x", tmp_path=tmp_path))).allowed
    assert approver.seen == []


async def test_ci_mode_denies_whatever_needs_a_human(tmp_path):
    rules = ruleset({"allow": ["ssh_exec(command=docker run *)"]})
    g, approver, _ = gate(mode="ci", rules=rules, answers=[("approved", "")])
    assert (await g.check(prepared("docker run x", tmp_path=tmp_path))).allowed
    destructive = await g.check(prepared("rm -rf /x", tmp_path=tmp_path))
    assert not destructive.allowed and destructive.reason.kind == "ci"
    assert approver.seen == []


async def test_auto_safe_lets_rules_allow_mutating_but_destructive_always_asks(tmp_path):
    rules = ruleset({"allow": ["ssh_exec(host=spark-*, command=docker run *)",
                               "ssh_exec(host=spark-*, command=rm -rf *)"]})  # fmt: skip
    g, approver, _ = gate(mode="auto-safe", rules=rules, answers=[("denied", "no")])
    assert (await g.check(prepared("docker run x", tmp_path=tmp_path))).allowed
    assert not (await g.check(prepared("rm -rf /x", tmp_path=tmp_path))).allowed
    assert len(approver.seen) == 1


async def test_deny_rule_beats_allow_and_read_only(tmp_path):
    allow = "ssh_exec(host=spark-*, command=nvidia-smi)"
    rules = ruleset({"deny": ["ssh_exec(host=spark-b)"], "allow": [allow]})
    g, _, _ = gate(rules=rules)
    verdict = await g.check(prepared("nvidia-smi", host="spark-b", tmp_path=tmp_path))
    assert not verdict.allowed and "ssh_exec(host=spark-b)" in verdict.message


async def test_operator_session_allow_skips_the_question_next_time(tmp_path):
    g, approver, _ = gate(answers=[("approved", "")])
    g.rules.allow_for_session('ssh_exec(host=spark-a, command="docker run *")')
    assert (await g.check(prepared("docker run y", tmp_path=tmp_path))).allowed
    assert approver.seen == []


async def test_an_edit_is_validated_and_reclassified(tmp_path):
    edit = {"kind": "approved_with_edit", "edited_input": {"host": "spark-a", "command": "ls"}}
    g, _, _ = gate(answers=[edit])
    verdict = await g.check(prepared("docker run x", tmp_path=tmp_path))
    assert verdict.allowed and verdict.params.command == "ls"

    bad = {"kind": "approved_with_edit", "edited_input": {"command": "ls"}}
    g, _, _ = gate(answers=[bad])
    verdict = await g.check(prepared("docker run x", tmp_path=tmp_path))
    assert not verdict.allowed and verdict.reason.kind == "edit_invalid"


def edit(host, command):
    return {"kind": "approved_with_edit", "edited_input": {"host": host, "command": command}}


async def run_gated(g, command, tmp_path, host="spark-a"):
    """The call through a real executor with gate `g`: its result, and what actually ran."""
    RAN.clear()
    executor = Executor(
        ToolRegistry([FakeShell(), EchoTool()]),
        ToolContext(spill_dir=tmp_path),
        gate=g,
        limits=Settings().executor_limits(),
    )
    call = ToolCall("c1", "ssh_exec", {"host": host, "command": command})
    [result] = await executor.run_batch([call])
    return result, list(RAN)


async def test_an_edit_that_a_deny_rule_covers_never_runs(tmp_path):
    rules = ruleset({"deny": ['ssh_exec(command="*reboot*")']})
    g, approver, _ = gate(rules=rules, answers=[edit("spark-b", "sudo reboot"), ("approved", "")])
    result, ran = await run_gated(g, "docker run x", tmp_path)
    assert result.is_error and ran == []
    assert result.reason.kind == "edit_refused"
    assert 'Denied by rule `ssh_exec(command="*reboot*")`' in result.text
    assert len(approver.seen) == 1  # the deny rule answered; no second question was needed

    g, _, _ = gate(rules=rules, answers=[edit("spark-a", "sudo reboot")])
    result, ran = await run_gated(g, "docker run x", tmp_path)
    assert result.is_error and ran == [] and "*reboot*" in result.text


async def test_an_edit_to_another_host_is_asked_again_and_runs_there(tmp_path):
    g, approver, events = gate(answers=[edit("spark-b", "docker run y"), ("approved", "ok")])
    result, ran = await run_gated(g, "docker run x", tmp_path)
    assert not result.is_error, result.text
    assert ran == [("spark-b", "docker run y")]
    assert result.meta["hosts"] == ["spark-b"]  # prepared.hosts follows the edit
    second = approver.seen[1]
    assert second.hosts == ["spark-b"] and second.input["command"] == "docker run y"
    assert second.fingerprint == fingerprint("ssh_exec", second.input, ["spark-b"])
    assert [e.type for e in events] == ["approval_request", "approval_decision"] * 2


async def test_a_riskier_edit_is_asked_again_and_a_denial_stops_it(tmp_path):
    g, approver, _ = gate(answers=[edit("spark-a", "rm -rf /data"), ("denied", "not that")])
    result, ran = await run_gated(g, "docker run x", tmp_path)
    assert result.is_error and ran == []
    assert "Denied by tester: not that" in result.text
    assert approver.seen[1].risk == "destructive"


async def test_an_edit_of_the_same_shape_runs_without_a_second_question(tmp_path):
    g, approver, _ = gate(answers=[edit("spark-a", "docker run y")])
    result, ran = await run_gated(g, "docker run x", tmp_path)
    assert not result.is_error and ran == [("spark-a", "docker run y")]
    assert len(approver.seen) == 1


async def test_an_edit_meeting_a_new_ask_rule_is_asked_again(tmp_path):
    rules = ruleset({"ask": ['ssh_exec(command="docker rm*")']})
    g, approver, _ = gate(rules=rules, answers=[edit("spark-a", "docker rm x"), ("denied", "")])
    result, ran = await run_gated(g, "docker run x", tmp_path)
    assert result.is_error and ran == [] and len(approver.seen) == 2


async def test_an_edit_is_held_to_the_plan_gate(tmp_path):
    rules = ruleset({"ask": ['ssh_exec(command="cat*")']})
    g, approver, _ = gate(
        approved=False, rules=rules, answers=[edit("spark-a", "docker run x"), ("approved", "")]
    )
    result, ran = await run_gated(g, "cat /etc/hosts", tmp_path)
    assert result.is_error and ran == []
    assert result.reason == Reason(kind="edit_refused", fields={"refused": "no_plan"})
    assert len(approver.seen) == 1


async def test_an_approver_that_keeps_editing_is_stopped(tmp_path):
    answers = [edit(f"spark-{n}", "docker run x") for n in range(10)]
    g, approver, _ = gate(answers=answers)
    result, ran = await run_gated(g, "docker run x", tmp_path)
    assert result.is_error and ran == []
    assert result.reason == Reason(kind="edit_refused", fields={"refused": "edit_rounds"})
    assert len(approver.seen) == 4


def test_fingerprints_keep_whitespace_that_matters():
    one_line = fingerprint("ssh_exec", {"host": "a", "command": "ls /tmp rm -rf /data"}, ["a"])
    two_lines = fingerprint("ssh_exec", {"host": "a", "command": "ls /tmp\nrm -rf /data"}, ["a"])
    spaced = fingerprint("ssh_exec", {"host": "a", "command": "echo 'a  b'"}, ["a"])
    assert (
        len(
            {
                one_line,
                two_lines,
                spaced,
                fingerprint("ssh_exec", {"host": "a", "command": "echo 'a b'"}, ["a"]),
            }
        )
        == 4
    )
    reordered = fingerprint("ssh_exec", {"command": "ls /tmp rm -rf /data", "host": "a"}, ["a"])
    assert reordered == one_line  # key order is not part of the call


async def test_plan_review_binds_the_plan_hash(tmp_path):
    g, approver, events = gate(approved=False, answers=[("approved", "")])
    ok, _, _ = await g.review_plan(PLAN, ProposePlanTool.name)
    assert ok and approver.seen[0].fingerprint == PLAN.digest()
    assert events[0].tool == "propose_plan" and events[1].fingerprint == PLAN.digest()


def test_rule_syntax_errors_say_how_to_write_one():
    with pytest.raises(RuleError, match=r"expected field=pattern, got .host spark."):
        ApprovalRule.parse("allow", "ssh_exec(host spark)")


class EnvInput(BaseModel):
    host: str
    command: str
    env: dict[str, str] | None = None


class FakeShellWithEnv(FakeShell):
    Input = EnvInput


async def test_the_approver_sees_the_call_redacted_with_control_characters_visible(tmp_path):
    g, approver, events = gate(answers=[("approved", "")])
    executor = Executor(
        ToolRegistry([FakeShellWithEnv()]),
        ToolContext(spill_dir=tmp_path),
        limits=Settings().executor_limits(),
    )
    call_input = {
        "host": "spark-a",
        "command": "docker run img echo \x1b[8mhidden\x1b[0m",
        "env": {"HF_TOKEN": "hf_abcdefghijklmnopqrstuvwxyz012345"},
    }
    prepared_call = executor.prepare(ToolCall("c1", "ssh_exec", call_input))
    assert (await g.check(prepared_call)).allowed
    shown = approver.seen[0]
    assert shown.input["command"] == "docker run img echo \\x1b[8mhidden\\x1b[0m"
    assert shown.input["env"] == {"HF_TOKEN": "[REDACTED]"}
    assert "hf_abc" not in str(events[0].input) and "\x1b" not in str(events[0].input)


async def test_an_edit_built_on_the_redacted_view_keeps_the_hidden_values(tmp_path):
    secret = {"HF_TOKEN": "hf_abcdefghijklmnopqrstuvwxyz012345"}
    edit = {
        "kind": "approved_with_edit",
        "edited_input": {"host": "spark-a", "command": "ls", "env": {"HF_TOKEN": "[REDACTED]"}},
    }
    g, _, _ = gate(answers=[edit])
    executor = Executor(
        ToolRegistry([FakeShellWithEnv()]),
        ToolContext(spill_dir=tmp_path),
        limits=Settings().executor_limits(),
    )
    call = ToolCall("c1", "ssh_exec", {"host": "spark-a", "command": "docker run x", "env": secret})
    verdict = await g.check(executor.prepare(call))
    assert verdict.allowed and verdict.params.env == secret and verdict.params.command == "ls"


async def test_serves_names_the_step_whose_action_is_exactly_the_command(tmp_path):
    g, approver, _ = gate(answers=[("approved", ""), ("approved", "")])
    await g.check(prepared("docker run -d --name ray-head img --extra", tmp_path=tmp_path))
    await g.check(prepared("docker run", tmp_path=tmp_path))
    assert [r.plan_step for r in approver.seen] == [None, None]


STEPS = Plan(
    goal="free the head and start the engine",
    steps=[
        PlanStep(
            title="stop the old server",
            hosts=["spark-a"],
            actions=["docker stop vllm_node", "docker rm vllm_node"],
            expected_downtime="the old endpoint",
            rollback="none",
            success_check="docker ps",
        ),
        PlanStep(
            title="start ray",
            hosts=["spark-a", "spark-b"],
            actions=["docker run -d --name ray img"],
            expected_downtime="none",
            rollback="docker rm -f ray",
            success_check="ray status",
        ),
    ],
)


async def approved_with_steps(answers=()):
    g, approver, events = gate(
        approved=False, answers=[{"kind": "approved", "approve_steps": True}, *answers]
    )
    _, _, with_steps = await g.review_plan(STEPS, ProposePlanTool.name)
    g.plan.approve(STEPS, StepApprovals(STEPS) if with_steps else None)
    return g, approver, events


async def test_steps_approved_with_the_plan_run_once_in_order_without_asking(tmp_path):
    g, approver, events = await approved_with_steps()
    for command, host in [
        ("docker stop vllm_node", "spark-a"),
        ("docker  rm   vllm_node", "spark-a"),
        ("docker run -d --name ray img", "spark-b"),
        ("docker run -d --name ray img", "spark-a"),
    ]:
        verdict = await g.check(prepared(command, host=host, tmp_path=tmp_path))
        assert verdict.allowed, command
        verdict.settle(ToolResult(text="ok"))
    assert len(approver.seen) == 1  # only the plan itself
    decided = [e for e in events if e.type == "approval_decision"][1:]
    assert {e.decided_by for e in decided} == {"plan approval"}
    assert decided[0].message == "step 1 as approved with the plan"
    again = await g.check(prepared("docker stop vllm_node", tmp_path=tmp_path))
    assert not again.allowed and len(approver.seen) == 2  # used once: now it asks (denied)


async def test_a_call_that_differs_by_one_flag_or_host_or_order_asks(tmp_path):
    g, approver, _ = await approved_with_steps([("approved", "")] * 3)
    for command, host in [
        ("docker stop -t 0 vllm_node", "spark-a"),
        ("docker stop vllm_node", "spark-b"),
        ("docker rm vllm_node", "spark-a"),
    ]:
        await g.check(prepared(command, host=host, tmp_path=tmp_path))
    assert len(approver.seen) == 4


async def test_after_a_failed_step_everything_asks(tmp_path):
    g, approver, _ = await approved_with_steps([("denied", "")])
    verdict = await g.check(prepared("docker stop vllm_node", tmp_path=tmp_path))
    assert verdict.allowed and len(approver.seen) == 1
    verdict.settle(ToolResult.error("exit 1"))
    assert not (await g.check(prepared("docker rm vllm_node", tmp_path=tmp_path))).allowed
    assert len(approver.seen) == 2


async def test_per_step_asking_stays_the_default(tmp_path):
    g, approver, _ = gate(approved=False, answers=[("approved", ""), ("approved", "")])
    await g.review_plan(STEPS, ProposePlanTool.name)
    g.plan.approve(STEPS)
    await g.check(prepared("docker stop vllm_node", tmp_path=tmp_path))
    assert len(approver.seen) == 2


async def test_a_step_call_still_running_makes_the_next_one_ask(tmp_path):
    g, approver, _ = await approved_with_steps([("denied", "")])
    first = await g.check(prepared("docker stop vllm_node", tmp_path=tmp_path))
    second = await g.check(prepared("docker rm vllm_node", tmp_path=tmp_path))
    assert first.allowed and not second.allowed and len(approver.seen) == 2


async def test_the_gate_says_when_a_human_decided_so_reads_no_one_approved_are_walled(tmp_path):
    g, _, _ = gate(approved=False)
    assert (await g.check(prepared("nvidia-smi", tmp_path=tmp_path))).human is False
    asked = ruleset({"ask": ['ssh_exec(command="cat *")']})
    g, approver, _ = gate(answers=[("approved", "")], rules=asked)
    verdict = await g.check(prepared("cat /etc/os-release", tmp_path=tmp_path))
    assert verdict.allowed and verdict.human and len(approver.seen) == 1


async def test_the_plan_gate_serves_whichever_tool_declares_it_approves_plans():
    """No place matches a tool's name: a plan asked for by another tool is still a plan."""
    g, approver, events = gate(
        approved=False, answers=[{"kind": "approved", "approve_steps": True}]
    )
    approved, _, with_steps = await g.review_plan(STEPS, "submit_rollout_plan")
    assert approved and with_steps
    assert approver.seen[0].tool == "submit_rollout_plan" and approver.seen[0].is_plan
    assert events[0].tool == "submit_rollout_plan" and events[0].call_id == "plan"


def test_the_registry_names_the_tools_that_approve_plans():
    class Submit(EchoTool):
        name = "submit_rollout_plan"
        approves_plan = True

    registry = ToolRegistry([FakeShell(), EchoTool(), Submit()])
    assert registry.plan_approvers() == frozenset({"submit_rollout_plan"})
