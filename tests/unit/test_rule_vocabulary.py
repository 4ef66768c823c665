"""Rules mean what the README says (issue 35, item 4).

An allow rule must name what its tool's `RuleShape` says (ssh_exec: the command), or it allows
nothing; a rule naming a tool or a field Scout does not have is refused when read (a deny rule
that matches nothing lets the call through); a rule that does not read is one line naming it,
on the command line and in the settings file alike; `scout policy check` reads the settings
file's rules as a session does.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from pydantic import BaseModel

from agent.daytwo.status import deployment_reader
from agent.faces.cli import main
from agent.faces.doctor import run_checks
from agent.loop.scripted_client import ScriptedClient
from agent.runtime.builder import open_runtime
from agent.runtime.settings import Settings, SettingsError, load_settings
from agent.runtime.settings_rules import read_rules
from agent.safety.policy import policy_answer
from agent.safety.rules import ApprovalRule, RuleError, RuleSet
from tools.base import RuleShape, Tool
from tools.catalog import SCOUT_TOOLS
from tools.risk.assessment import Risk
from tools.ssh_exec import SSHExec

APT = {"host": "spark-a", "command": "apt-get install -y foo"}
APT_CALL = json.dumps({"tool": "ssh_exec", "input": APT})


def answer(rules: RuleSet, tool: str, tool_input: dict, mode: str = "auto-safe"):
    return policy_answer(
        tool=tool,
        tool_input=tool_input,
        hosts=[tool_input["host"]],
        risk=Risk.MUTATING,
        reason="changes packages",
        rules=rules,
        mode=mode,
        plan_approved=True,
    )


def test_an_ssh_exec_allow_rule_without_a_command_is_refused_when_read():
    with pytest.raises(RuleError) as raised:
        read_rules({"allow": ["ssh_exec(host=spark-*)"]})
    assert str(raised.value).startswith(
        "rule 'ssh_exec(host=spark-*)': a ssh_exec allow rule must name the command, for example"
    )


def test_an_allow_rule_without_the_named_field_allows_no_call_of_the_tool():
    """However it got there (read without the shapes), it covers nothing: auto-safe asks."""
    rules = RuleSet(shapes={SSHExec.name: SSHExec.rule_shape})
    rules.add(ApprovalRule.parse("allow", "ssh_exec(host=spark-*)"))
    assert answer(rules, "ssh_exec", APT).decision == "ask"
    rules.add(ApprovalRule.parse("allow", 'ssh_exec(host=spark-*, command="apt-get install -y *")'))
    assert answer(rules, "ssh_exec", APT).decision == "allow"


class ScriptInput(BaseModel):
    host: str
    script: str
    retries: int = 0


class RunScript(Tool[ScriptInput]):
    """A tool the rules have never heard of: what it declares is what they hold it to."""

    name = "run_script"
    description = "run a script"
    Input = ScriptInput
    rule_shape = RuleShape(open=frozenset({"host", "retries"}), named=("script",))

    def hosts(self, params):
        return [params.host]

    async def run(self, params, ctx):  # pragma: no cover - judged, never run
        raise AssertionError


def test_what_an_allow_rule_must_name_is_the_tools_declaration_not_its_name():
    with pytest.raises(RuleError, match="a run_script allow rule must name the script"):
        read_rules({"allow": ["run_script(host=spark-*)"]}, [RunScript])
    rules = read_rules({"allow": ["run_script(host=spark-*, script=backup-*)"]}, [RunScript])
    call = {"host": "spark-a", "script": "backup-db", "retries": 3}
    assert answer(rules, "run_script", call).decision == "allow"
    bare = RuleSet(shapes={RunScript.name: RunScript.rule_shape})
    bare.add(ApprovalRule.parse("allow", "run_script(host=spark-*)"))
    assert answer(bare, "run_script", call).decision == "ask"


@pytest.mark.parametrize("tool", SCOUT_TOOLS, ids=lambda tool: tool.name)
def test_a_rule_naming_a_field_its_tool_lacks_is_refused_for_every_tool(tool):
    for effect in ("deny", "ask", "allow"):
        with pytest.raises(RuleError) as raised:
            read_rules({effect: [f"{tool.name}(no_such_field=x)"]})
        assert f"{tool.name} has no field 'no_such_field'" in str(raised.value)


@pytest.mark.parametrize(
    ("effect", "rule", "problem"),
    [
        ("deny", 'ssh_exce(command="rm *")', "there is no tool 'ssh_exce'"),
        ("deny", 'ssh_exec(cmd="rm *")', "ssh_exec has no field 'cmd'"),
        ("ask", "docker_*(acton=rm)", "no tool that 'docker_*' matches has a field 'acton'"),
        ("deny", "web_fetch(host=evil.example)", "web_fetch has no field 'host'"),
        ("deny", "*_ctl(action=rm)", None),  # a wildcard naming a tool's field
        ("deny", "rollout_step(host=spark-b)", None),  # it reaches hosts: `host=` holds
        ("deny", 'ssh_exec(hosts="spark-*")', None),
    ],
)
def test_a_rule_naming_what_scout_does_not_have_is_refused(effect, rule, problem):
    if problem is None:
        assert read_rules({effect: [rule]}).rules
        return
    with pytest.raises(RuleError) as raised:
        read_rules({effect: [rule]})
    assert str(raised.value).startswith(f"rule {rule!r}: {problem}")


def test_a_field_named_twice_is_refused():
    with pytest.raises(RuleError, match="names the field 'command' twice"):
        read_rules({"deny": ['ssh_exec(command="rm *", command="ls")']})


def run_cli(capsys, *argv: str) -> tuple[int, str, str]:
    status = main(list(argv))
    captured = capsys.readouterr()
    return status, captured.out, captured.err


UNCLOSED = 'ssh_exec(host=spark-*, command="apt-get install *)'


def test_an_unclosed_quote_on_the_command_line_is_one_line_naming_the_rule(capsys):
    status, out, err = run_cli(capsys, "policy", "check", "--call", APT_CALL, "--allow", UNCLOSED)
    assert (status, out) == (2, "")
    assert err.splitlines() == [f"scout policy check: rule {UNCLOSED!r}: a quote is not closed"]


@pytest.fixture
def settings_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    def write(text: str) -> Path:
        path = tmp_path / "settings.yaml"
        path.write_text(text, encoding="utf-8")
        monkeypatch.setenv("SCOUT_SETTINGS", str(path))
        return path

    return write


def test_an_unclosed_quote_in_the_settings_file_is_one_line_naming_the_rule(settings_file, capsys):
    path = settings_file(f"rules:\n  allow:\n    - '{UNCLOSED}'\n")
    expected = (
        f"invalid settings ({path} / SCOUT_* / flags): rules: "
        f"rule {UNCLOSED!r}: a quote is not closed"
    )
    with pytest.raises(SettingsError) as raised:
        load_settings()
    assert str(raised.value) == expected
    status, out, err = run_cli(capsys, "policy", "check", "--call", APT_CALL)
    assert (status, out, err.splitlines()) == (1, "", [f"scout: {expected}"])


def test_policy_check_applies_the_settings_files_rules_and_mode(settings_file, capsys):
    settings_file(
        "mode: auto-safe\nrules:\n  allow:\n"
        '    - ssh_exec(host=spark-*, command="apt-get install -y *")\n'
    )
    status, out, _ = run_cli(capsys, "policy", "check", "--call", APT_CALL)
    assert status == 0 and out.startswith("mutating allow — allowed by `ssh_exec(host=spark-*, ")
    status, out, _ = run_cli(capsys, "policy", "check", "--call", APT_CALL, "--mode", "ask")
    assert status == 0 and out.startswith("mutating ask — ")
    settings_file('rules:\n  deny:\n    - ssh_exec(command="apt-get *")\n')
    status, out, _ = run_cli(capsys, "policy", "check", "--call", APT_CALL)
    assert status == 0 and out.startswith("mutating deny — denied by rule")


async def test_policy_check_and_a_session_refuse_a_settings_rule_alike(
    settings_file, tmp_path, capsys
):
    rule = 'ssh_exec(cmd="apt-get *")'
    settings_file(f"rules:\n  deny:\n    - '{rule}'\n")
    status, out, err = run_cli(capsys, "policy", "check", "--call", APT_CALL)
    line = f"settings: rules: rule {rule!r}: ssh_exec has no field 'cmd'"
    assert (status, out) == (1, "") and err.startswith(f"scout: {line} (its fields: ")
    assert len(err.splitlines()) == 1
    inventory = tmp_path / "inventory.yaml"
    inventory.write_text("hosts:\n  spark-a: {address: 127.0.0.1}\n")
    settings = Settings(inventory=inventory, transcripts_dir=tmp_path / "t", rules={"deny": [rule]})
    with pytest.raises(SettingsError) as raised:
        await open_runtime(settings, client=ScriptedClient([]), approver_factory=lambda r: None)
    assert str(raised.value) == err.strip().removeprefix("scout: ")


async def test_doctor_fails_a_rule_a_session_would_refuse(tmp_path):
    rule = 'ssh_exec(cmd="apt-get *")'
    checks = await run_checks(Settings(rules={"deny": [rule]}), None)
    rules = next(check for check in checks if check.name == "rules")
    assert not rules.ok
    assert rules.detail.startswith(f"settings: rules: rule {rule!r}: ssh_exec has no field 'cmd'")
    checks = await run_checks(Settings(rules={"deny": ['ssh_exec(command="apt-get *")']}), None)
    assert next(check for check in checks if check.name == "rules").ok


@pytest.mark.parametrize("tool", SCOUT_TOOLS, ids=lambda tool: tool.name)
def test_each_shape_speaks_only_of_its_tools_fields(tool):
    shape = tool.rule_shape
    spoken = {*shape.open, *shape.defaults, *shape.required, *shape.named} - {"host"}
    assert spoken <= set(tool.rule_fields())


async def test_the_catalog_holds_every_tool_a_session_is_built_with(tmp_path):
    inventory = tmp_path / "inventory.yaml"
    inventory.write_text("hosts:\n  spark-a: {address: 127.0.0.1}\n")
    settings = Settings(inventory=inventory, transcripts_dir=tmp_path / "t")
    runtime = await open_runtime(  # as chat and `scout run` build it, with the records' reader
        settings,
        client=ScriptedClient([]),
        approver_factory=lambda r: None,
        deployments=deployment_reader(tmp_path / "deployments"),
    )
    try:
        built = set(runtime.session.executor.registry.names())
    finally:
        await runtime.aclose()
    assert built == {tool.name for tool in SCOUT_TOOLS}
