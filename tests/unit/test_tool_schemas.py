"""Tool schemas sized to what they say: no titles, no null alternatives, fields and rules kept."""

from agent.loop.request_rules import check_request
from agent.safety.shell.judge import judge_shell
from tests.support.no_hosts import no_hosts
from tools.deploy.rollout.state import SessionState
from tools.docker.params import DockerCtlInput
from tools.docker_ctl import DockerCtl
from tools.propose_plan import ProposePlanTool
from tools.schema import compact_schema
from tools.ssh_exec import SSHExec


def test_titles_and_null_defaults_go_but_fields_named_title_stay():
    schema = ProposePlanTool(SessionState(), review=None).definition()["input_schema"]  # type: ignore[arg-type]
    step = schema["$defs"]["PlanStep"]
    assert "title" in step["properties"] and "title" in step["required"]
    assert "title" not in step and "title" not in step["properties"]["rollback"]
    assert '"title": "' not in str(schema)


def test_an_optional_field_reads_as_its_type_and_still_accepts_null():
    properties = DockerCtl(no_hosts(), judge_shell).definition()["input_schema"]["properties"]
    assert properties["container"]["type"] == "string" and "anyOf" not in properties["container"]
    assert "default" not in properties["container"]
    assert properties["command"]["anyOf"] == [
        {"items": {"type": "string"}, "type": "array"},
        {"type": "string"},
    ]
    assert DockerCtlInput.model_validate({"host": "a", "action": "ps", "all": True}).all
    assert DockerCtlInput(host="a", action="logs", container="c", since=None).since is None


def test_defaults_and_limits_that_say_something_are_kept():
    properties = SSHExec(no_hosts(), judge_shell).definition()["input_schema"]["properties"]
    assert properties["timeout"]["default"] == 120 and properties["timeout"]["maximum"] == 3600


def test_compacting_twice_changes_nothing():
    schema = DockerCtlInput.model_json_schema()
    assert compact_schema(compact_schema(schema)) == compact_schema(schema)


def test_every_definition_passes_the_api_rules_for_tools():
    tools = [
        SSHExec(no_hosts(), judge_shell).definition(),
        DockerCtl(no_hosts(), judge_shell).definition(),
    ]
    body = {
        "model": "claude-sonnet-4-5",
        "max_tokens": 1024,
        "tools": tools,
        "messages": [{"role": "user", "content": "hi"}],
    }
    assert check_request(body) is None
