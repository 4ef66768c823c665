"""What an allow rule must name comes from the tool's own declaration (`Tool.rule_shape`).

agent/safety names no tool: a tool it has never heard of, declared here with a shape of its own,
gets exactly what ssh_exec and docker_ctl get (its required field enforced when the rule is read,
only what the rule names covered, the `a` rule naming exactly the call), and a tool without a
shape the rules were given is never allowed by a rule and is offered no `a`.
"""

from __future__ import annotations

import io
from pathlib import Path
from typing import Literal

import pytest
from pydantic import BaseModel, ConfigDict
from rich.console import Console

from agent.loop.calls import ToolCall
from agent.loop.executor import Executor
from agent.loop.scripted_client import ScriptedClient
from agent.runtime.builder import open_runtime
from agent.runtime.settings import Settings, SettingsError
from agent.safety.approvals import ApprovalRequest
from agent.safety.approvers.terminal import TerminalApprover
from agent.safety.gate import PolicyGate
from agent.safety.policy import policy_answer
from agent.safety.rules import RuleError, RuleSet
from agent.safety.session_rules import session_rule
from tests.support.plans import one_step_plan
from tools.base import RuleShape, Tool, ToolContext, ToolResult
from tools.docker.params import DockerCtlInput
from tools.docker_ctl import DockerCtl
from tools.plans.approval import PlanState
from tools.registry import ToolRegistry
from tools.risk.assessment import Risk, RiskAssessment
from tools.ssh_exec import SSHExec, SSHExecInput


class SnapshotInput(BaseModel):
    model_config = ConfigDict(extra="forbid")

    host: str
    volume: str
    mode: Literal["create", "delete"]
    keep_days: int = 7
    wait_s: float | None = None
    dry_run: bool = False
    label: str | None = None


class VolumeSnapshot(Tool[SnapshotInput]):
    """A tool agent/safety has never heard of, with a rule shape of its own."""

    name = "volume_snapshot"
    description = "snapshot a volume"
    Input = SnapshotInput
    rule_shape = RuleShape(
        open=frozenset({"host", "wait_s"}),
        defaults={"keep_days": 7, "dry_run": False},
        required=("mode",),
        example="volume_snapshot(host=spark-a, mode=create, volume=models)",
    )

    def risk(self, params: SnapshotInput) -> RiskAssessment:
        return RiskAssessment(Risk.MUTATING, f"{params.mode} a snapshot")

    def hosts(self, params: SnapshotInput) -> list[str]:
        return [params.host]

    async def run(self, params: SnapshotInput, ctx: ToolContext) -> ToolResult:
        return ToolResult(text="snapshot taken")


class TagInput(BaseModel):
    host: str
    image: str
    tag: str


class ImageTag(Tool[TagInput]):
    """A tool that declares nothing: the contract's default shape holds it to every field."""

    name = "image_tag"
    description = "tag an image"
    Input = TagInput

    def risk(self, params: TagInput) -> RiskAssessment:
        return RiskAssessment(Risk.MUTATING, "tags an image")

    def hosts(self, params: TagInput) -> list[str]:
        return [params.host]

    async def run(self, params: TagInput, ctx: ToolContext) -> ToolResult:
        return ToolResult(text="tagged")


SHAPES = {tool.name: tool.rule_shape for tool in (VolumeSnapshot, ImageTag)}
CREATE = {"host": "spark-a", "volume": "models", "mode": "create"}


def decide(rules: RuleSet, tool: str, tool_input: dict, hosts=("spark-a",), mode="auto-safe"):
    return policy_answer(
        tool=tool,
        tool_input=tool_input,
        hosts=list(hosts),
        risk=Risk.MUTATING,
        reason="judged",
        rules=rules,
        mode=mode,
        plan_approved=True,
    ).decision


def allow(*texts: str, shapes=SHAPES) -> RuleSet:
    return RuleSet.from_config({"allow": list(texts)}, shapes=shapes)


def request(tool: str, tool_input: dict) -> ApprovalRequest:
    return ApprovalRequest(id="r", fingerprint="f", tool=tool, input=tool_input,
                           hosts=[tool_input["host"]], risk="mutating", reason="x")  # fmt: skip


def test_an_allow_rule_must_name_what_a_new_tool_requires_literally():
    for text in ("volume_snapshot(volume=models)", "volume_snapshot(mode=*, volume=models)"):
        with pytest.raises(RuleError, match="must name the mode") as raised:
            allow(text)
        assert "volume_snapshot(host=spark-a, mode=create, volume=models)" in str(raised.value)
    careful = RuleSet.from_config({"deny": ["volume_snapshot(volume=models)"]}, shapes=SHAPES)
    assert decide(careful, "volume_snapshot", CREATE) == "deny"  # deny and ask need no mode


def test_a_new_tools_rule_covers_only_what_it_names_beyond_its_open_fields_and_defaults():
    rules = allow("volume_snapshot(mode=create, volume=models)")
    spelled_out = {**CREATE, "wait_s": 30, "keep_days": 7, "dry_run": False}
    assert decide(rules, "volume_snapshot", CREATE) == "allow"
    assert decide(rules, "volume_snapshot", spelled_out) == "allow"
    for wider in (
        {**CREATE, "label": "nightly"},  # a field set that the rule does not name
        {**CREATE, "keep_days": 30},  # a field away from its default
        {**CREATE, "dry_run": True},
        {**CREATE, "mode": "delete"},
        {**CREATE, "volume": "etc"},
    ):
        assert decide(rules, "volume_snapshot", wider) == "ask", wider


def test_the_a_rule_for_a_new_tool_names_exactly_its_call():
    call = {**CREATE, "wait_s": 30, "label": "nightly"}
    text = session_rule(request("volume_snapshot", call), SHAPES["volume_snapshot"])
    assert text == "volume_snapshot(host=spark-a, volume=models, mode=create, label=nightly)"
    rules = RuleSet(shapes=SHAPES)
    rules.allow_for_session(text)
    assert decide(rules, "volume_snapshot", call, mode="ask") == "allow"
    assert decide(rules, "volume_snapshot", {**call, "keep_days": 1}, mode="ask") == "ask"
    assert decide(rules, "volume_snapshot", {**call, "label": "x"}, mode="ask") == "ask"
    assert decide(rules, "volume_snapshot", {**call, "host": "spark-b"}, ("spark-b",)) == "ask"


def test_a_tool_that_declares_nothing_is_held_to_every_field_but_its_host():
    bare = allow("image_tag")
    call = {"host": "spark-a", "image": "vllm:1", "tag": "prod"}
    assert decide(bare, "image_tag", call) == "ask"
    assert decide(allow("image_tag(image=vllm:1)"), "image_tag", call) == "ask"
    assert decide(allow("image_tag(image=vllm:1, tag=prod)"), "image_tag", call) == "allow"
    text = session_rule(request("image_tag", call), SHAPES["image_tag"])
    assert text == "image_tag(host=spark-a, image=vllm:1, tag=prod)"


def test_a_tool_the_rules_have_no_shape_for_is_never_allowed_by_a_rule():
    unknown = allow("volume_snapshot", "volume_snapshot(mode=create, volume=models)", shapes={})
    assert decide(unknown, "volume_snapshot", CREATE) == "ask"
    assert session_rule(request("volume_snapshot", CREATE), None) is None


async def test_no_a_is_offered_for_a_tool_the_rules_have_no_shape_for():
    prompts: list[str] = []

    async def ask(prompt: str) -> str:
        prompts.append(prompt)
        return "a" if len(prompts) == 1 else "y"

    terminal = TerminalApprover(Console(file=io.StringIO(), width=80), ask, RuleSet())
    decision = await terminal.decide(request("volume_snapshot", CREATE))
    assert "[a]llow" not in prompts[0] and decision.kind == "approved" and len(prompts) == 2


def test_a_field_a_shape_does_not_mention_must_be_named():
    ssh = {"ssh_exec": SSHExec.rule_shape}
    rules = allow('ssh_exec(command="git pull")', shapes=ssh)
    assert decide(rules, "ssh_exec", {"host": "spark-a", "command": "git pull"}) == "allow"
    assert decide(rules, "ssh_exec", {"host": "spark-a", "command": "git pull", "x": "1"}) == "ask"


async def test_through_the_gate_an_a_answer_lets_the_same_new_tool_call_run_and_no_wider(
    tmp_path: Path,
):
    registry = ToolRegistry([VolumeSnapshot()])
    rules = RuleSet(shapes={tool.name: tool.rule_shape for tool in registry})
    answers = iter(["a", "n", ""])

    async def ask(prompt: str) -> str:
        return next(answers)

    plan = PlanState()
    plan.approve(
        one_step_plan(
            "keep the models",
            title="snapshot",
            host="spark-a",
            actions=["x"],
            rollback="none",
            success_check="listed",
        )
    )
    terminal = TerminalApprover(Console(file=io.StringIO()), ask, rules)
    gate = PolicyGate(mode="ask", rules=rules, plan=plan, approver=terminal)
    limits = Settings().executor_limits()
    executor = Executor(registry, ToolContext(spill_dir=tmp_path), limits=limits)

    async def check(call_input: dict) -> bool:
        prepared = executor.prepare(ToolCall("c1", "volume_snapshot", call_input))
        assert not isinstance(prepared, ToolResult)
        return (await gate.check(prepared)).allowed

    assert await check(CREATE)  # asked; `a`
    assert [rule.text for rule in rules.rules] == [
        "volume_snapshot(host=spark-a, volume=models, mode=create)"
    ]
    assert await check({**CREATE, "wait_s": 5})  # not asked: the rule covers it
    assert not await check({**CREATE, "mode": "delete"})  # asked; `n`


def test_the_shapes_name_only_their_tools_fields_and_docker_defaults_are_its_inputs():
    for tool, model in ((SSHExec, SSHExecInput), (DockerCtl, DockerCtlInput)):
        shape = tool.rule_shape
        assert set(shape.open) | set(shape.defaults) | set(shape.required) <= set(
            model.model_fields
        )
    docker = DockerCtl.rule_shape
    input_defaults = {
        name: field.default
        for name, field in DockerCtlInput.model_fields.items()
        if not field.is_required() and field.default is not None and name not in docker.open
    }
    assert dict(docker.defaults) == input_defaults


async def test_a_settings_allow_rule_missing_a_required_field_is_a_settings_error(tmp_path):
    inventory = tmp_path / "inventory.yaml"
    inventory.write_text("hosts:\n  spark-a: {address: 127.0.0.1}\n")

    def settings(rule: str) -> Settings:
        return Settings(inventory=inventory, transcripts_dir=tmp_path / "t",
                        rules={"allow": [rule]})  # fmt: skip

    with pytest.raises(SettingsError, match="must name the action"):
        await open_runtime(settings("docker_ctl(host=spark-a)"), client=ScriptedClient([]),
                           approver_factory=lambda rules: None)  # fmt: skip
    runtime = await open_runtime(
        settings("docker_ctl(host=spark-a, action=restart, container=vllm_node)"),
        client=ScriptedClient([]),
        approver_factory=lambda rules: None,
    )
    try:
        restart = {"host": "spark-a", "action": "restart", "container": "vllm_node"}
        assert decide(runtime.gate.rules, "docker_ctl", restart) == "allow"
        assert decide(runtime.gate.rules, "docker_ctl", {**restart, "container": "x"}) == "ask"
    finally:
        await runtime.aclose()


CALLS = [
    ("ssh_exec", {"host": "spark-a", "command": "docker restart vllm_node", "timeout": 30}),
    ("ssh_exec", {"host": "spark-a", "command": "make install", "cwd": "/srv/app", "env": {}}),
    ("docker_ctl", {"host": "spark-a", "action": "pull", "image": "nvcr.io/nvidia/vllm:26.05"}),
    ("docker_ctl", {"host": "spark-a", "action": "restart", "container": "vllm", "timeout": 9}),
    ("docker_ctl", {"host": "spark-a", "action": "rm", "container": "old", "force": True}),
    ("docker_ctl", {"host": "spark-a", "action": "logs", "container": "vllm", "tail": 50}),
    ("volume_snapshot", {**CREATE, "keep_days": 30, "label": "nightly", "wait_s": 5}),
    ("image_tag", {"host": "spark-a", "image": "vllm:1", "tag": "prod"}),
]
ALL_SHAPES = {**SHAPES, "ssh_exec": SSHExec.rule_shape, "docker_ctl": DockerCtl.rule_shape}


def changed(value):
    """Another value of the same kind."""
    if isinstance(value, bool):
        return not value
    if isinstance(value, int | float):
        return value + 1
    return f"{value}-other"


@pytest.mark.parametrize(("tool", "call"), CALLS)
def test_the_a_rule_covers_its_call_and_no_call_that_differs_in_a_field_it_must_name(tool, call):
    shape = ALL_SHAPES[tool]
    text = session_rule(request(tool, call), shape)
    assert text is not None
    rules = RuleSet(shapes=ALL_SHAPES)
    rules.allow_for_session(text)
    assert decide(rules, tool, call, mode="ask") == "allow"
    for key, value in call.items():
        if key in shape.open or key == "host" or not isinstance(value, str | int | float):
            continue
        other = {**call, key: changed(value)}
        assert decide(rules, tool, other, mode="ask") == "ask", (key, other[key])


@pytest.mark.parametrize("spelling", ["true", "True", "TRUE"])
def test_a_flag_is_matched_however_a_rule_spells_true(spelling):
    run = {"host": "spark-a", "action": "run", "image": "x", "privileged": True}
    deny = RuleSet.from_config({"deny": [f"docker_ctl(privileged={spelling})"]}, shapes=ALL_SHAPES)
    assert decide(deny, "docker_ctl", run) == "deny"
    assert decide(deny, "docker_ctl", {**run, "privileged": False}) == "ask"
