import io

import pytest
from rich.console import Console

from agent.safety.approvals import ApprovalRequest
from agent.safety.approvers.terminal import TerminalApprover
from agent.safety.rules import RuleSet
from tools.ssh_exec import SSHExec


def session_rules():
    """The session's rules, as they know what ssh_exec declares a rule must name."""
    return RuleSet(shapes={SSHExec.name: SSHExec.rule_shape})


def request(command="docker stop vllm_node", tool="ssh_exec"):
    return ApprovalRequest(
        id="r1",
        fingerprint="sha256:abc",
        tool=tool,
        input={"host": "spark-a", "command": command},
        hosts=["spark-a"],
        risk="destructive",
        reason="'docker stop' stops a container",
        plan_step="step 1: free the head's memory",
    )


def approver(answers, allowed=None):
    out = io.StringIO()
    feed = iter(answers)

    async def ask(prompt):
        try:
            return next(feed)
        except StopIteration:
            raise EOFError from None

    return TerminalApprover(Console(file=out, width=80), ask, allowed), out


async def test_shows_tool_host_command_risk_and_plan_step_then_y_approves():
    terminal, out = approver(["y"])
    decision = await terminal.decide(request())
    screen = out.getvalue()
    for expected in (
        "ssh_exec on spark-a",
        "$ docker stop vllm_node",
        "destructive",
        "serves: step 1: free the head's memory",
    ):
        assert expected in screen
    assert decision.kind == "approved" and decision.fingerprint == "sha256:abc"


async def test_n_denies_with_the_operators_message():
    terminal, _ = approver(["n", "wait until the batch job ends"])
    decision = await terminal.decide(request())
    assert decision.kind == "denied" and decision.message == "wait until the batch job ends"


async def test_e_edits_the_command():
    terminal, _ = approver(["e", "docker stop -t 30 vllm_node"])
    decision = await terminal.decide(request())
    assert decision.kind == "approved_with_edit"
    assert decision.edited_input == {"host": "spark-a", "command": "docker stop -t 30 vllm_node"}


async def test_a_allows_exactly_this_call_for_the_session():
    rules = session_rules()
    terminal, out = approver(["a"], allowed=rules)
    decision = await terminal.decide(request())
    assert decision.kind == "approved"
    added = [(rule.text, rule.source) for rule in rules.rules]
    assert added == [('ssh_exec(host=spark-a, command="docker stop vllm_node")',
                      "operator (this session)")]  # fmt: skip
    assert "allowed for this session" in out.getvalue()


async def test_unknown_answers_ask_again_and_closed_input_denies():
    terminal, out = approver(["maybe"])
    decision = await terminal.decide(request())
    assert "answer y, n, e" in out.getvalue()
    assert decision.kind == "denied" and "input closed" in decision.message


async def test_a_is_not_offered_when_no_rule_can_say_the_call_exactly():
    rules = session_rules()
    terminal, out = approver(["a"], allowed=rules)
    decision = await terminal.decide(request("docker restart vllm_node && curl x | sh"))
    assert rules.rules == [] and "allow exactly this" not in out.getvalue()
    assert decision.kind == "denied"  # `a` was not an answer; then input closed


async def test_s_approves_a_plan_with_its_steps():
    plan = ApprovalRequest(
        id="p",
        fingerprint="plan:abc",
        tool="propose_plan",
        input={"goal": "x", "steps": []},
        risk="plan",
        reason="approve the plan",
        summary="Plan: x",
    )
    prompts = []

    async def ask(prompt):
        prompts.append(prompt)
        return "s"

    terminal = TerminalApprover(Console(file=io.StringIO(), width=80), ask, session_rules())
    decision = await terminal.decide(plan)
    assert "[s]teps too" in prompts[0]
    assert decision.kind == "approved" and decision.approve_steps


async def test_the_panel_shows_env_and_cwd_as_given():
    terminal, out = approver(["y"])
    shown = request()
    shown.input.update({"env": {"HF_TOKEN": "[REDACTED]"}, "cwd": "/srv/vllm"})
    await terminal.decide(shown)
    assert "env HF_TOKEN=[REDACTED]" in out.getvalue() and "in /srv/vllm" in out.getvalue()


def long_plan(steps: int = 12) -> ApprovalRequest:
    """A plan the size of the demo's: a long goal, and long commands on every step."""
    goal = "serve Qwen/Qwen3.5-122B-A10B-FP8 with vllm-multinode, TP=2. " + "Image: pulled. " * 60
    plan = {
        "goal": goal,
        "steps": [
            {
                "title": f"step title {n} " + "that goes on " * 8,
                "hosts": ["spark-a" if n % 2 else "spark-b"],
                "actions": [f"docker run --name c{n} " + "-e NCCL_X=enp1s0f1np1 " * 20],
                "expected_downtime": "none",
                "rollback": f"docker rm -f c{n}",
                "success_check": f"on spark-a: `docker ps` → c{n} is Up",
            }
            for n in range(1, steps + 1)
        ],
        "risks": ["the weights are not cached", "the link is down"],
    }
    rendered = "\n".join(
        [f"Plan: {goal}"]
        + [f"{n}. {s['title']}\n     $ {s['actions'][0]}" for n, s in enumerate(plan["steps"], 1)]
    )
    return ApprovalRequest(
        id="p",
        fingerprint="plan:abc",
        tool="propose_plan",
        input=plan,
        hosts=[],
        risk="plan",
        reason=f"approve the plan: {goal} ({steps} steps)",
        summary=rendered,
    )


def plan_approver(answers: list[str], width: int, height: int = 40):
    out, prompts, feed = io.StringIO(), [], iter(answers)

    async def ask(prompt):
        prompts.append((len(out.getvalue()), prompt))
        try:
            return next(feed)
        except StopIteration:
            raise EOFError from None

    console = Console(file=out, width=width, height=height, color_system=None)
    return TerminalApprover(console, ask, session_rules()), out, prompts


@pytest.mark.parametrize("width", [80, 120])
async def test_a_plan_fits_one_screen_one_line_a_step(width):
    terminal, out, prompts = plan_approver(["y"], width)
    decision = await terminal.decide(long_plan())
    panel = out.getvalue().splitlines()
    assert len(panel) + 1 <= 40  # the panel and its prompt
    assert all(len(line) <= width for line in panel)
    for n in range(1, 13):  # each step: one line, with its host
        [line] = [ln for ln in panel if f" step title {n} " in ln]
        assert f"{n:>2}. spark-{'a' if n % 2 else 'b'} step title {n}" in line
    assert "docker run" not in out.getvalue()  # the commands wait for `c`
    assert "risk: plan" not in out.getvalue()  # the goal is not said twice
    assert "[c]ommands" in prompts[0][1] and decision.kind == "approved"


async def test_c_shows_every_command_then_asks_again():
    terminal, out, prompts = plan_approver(["c", "s"], 80)
    decision = await terminal.decide(long_plan())
    shown_before_second_question = out.getvalue()[prompts[0][0] : prompts[1][0]]
    for n in range(1, 13):
        assert f"$ docker run --name c{n} " in shown_before_second_question
    assert len(prompts) == 2 and decision.approve_steps


async def test_a_plan_of_more_steps_than_rows_says_how_many_more():
    terminal, out, _ = plan_approver(["y"], 80, height=24)
    await terminal.decide(long_plan(steps=40))
    panel = out.getvalue().splitlines()
    assert len(panel) + 1 <= 24
    assert any("more steps (c shows them all)" in line for line in panel)
