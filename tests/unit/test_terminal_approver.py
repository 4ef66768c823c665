import io

from rich.console import Console

from agent.safety.approvals import ApprovalRequest
from agent.safety.approvers.terminal import TerminalApprover


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
    rules = []
    terminal, out = approver(["a"], allowed=rules.append)
    decision = await terminal.decide(request())
    assert decision.kind == "approved"
    assert rules == ['ssh_exec(host=spark-a, command="docker stop vllm_node")']
    assert "allowed for this session" in out.getvalue()


async def test_unknown_answers_ask_again_and_closed_input_denies():
    terminal, out = approver(["maybe"])
    decision = await terminal.decide(request())
    assert "answer y, n, e" in out.getvalue()
    assert decision.kind == "denied" and "input closed" in decision.message


async def test_a_is_not_offered_when_no_rule_can_say_the_call_exactly():
    rules = []
    terminal, out = approver(["a"], allowed=rules.append)
    decision = await terminal.decide(request("docker restart vllm_node && curl x | sh"))
    assert rules == [] and "allow exactly this" not in out.getvalue()
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

    terminal = TerminalApprover(Console(file=io.StringIO(), width=80), ask, [].append)
    decision = await terminal.decide(plan)
    assert "[s]teps too" in prompts[0]
    assert decision.kind == "approved" and decision.approve_steps


async def test_the_panel_shows_env_and_cwd_as_given():
    terminal, out = approver(["y"])
    shown = request()
    shown.input.update({"env": {"HF_TOKEN": "[REDACTED]"}, "cwd": "/srv/vllm"})
    await terminal.decide(shown)
    assert "env HF_TOKEN=[REDACTED]" in out.getvalue() and "in /srv/vllm" in out.getvalue()
