"""What Scout created with a shell command is its own: the containers a command line names
(`docker run|create --name`, wherever the shell would run it), recorded for each host where the
command exited 0, the approver's edit taking the place of the model's call."""

from __future__ import annotations

import pytest

from agent.loop.events import ApprovalDecisionEvent, ToolCallEvent, ToolResultEvent
from agent.runtime.own_work import OwnWork
from agent.safety.shell.creates import containers_created
from agent.world.model import WorldModel


@pytest.mark.parametrize(
    ("command", "names"),
    [
        ("docker run -d --name scout-vllm --network host img sleep infinity", ["scout-vllm"]),
        ("sudo docker run --name=a img; docker create --name b img", ["a", "b"]),
        ("docker -H unix:///run/docker.sock run --rm --name q img true", ["q"]),
        ('docker run -d --name e -e IP="$(ip -4 -br addr show dev x)" img', ["e"]),
        ("podman run -d --name p img", ["p"]),
        ("docker run img --name x", []),  # the container's own argument
        ('docker run --name "$NAME" img', []),  # known only when it runs
        ("echo docker run --name z img", []),
        ("docker ps --filter name=scout", []),
        ("docker run --name 'unclosed img", []),  # does not parse
    ],
)
def test_the_containers_a_command_line_creates(command: str, names: list[str]) -> None:
    assert containers_created(command) == names


def call(call_id: str, command: str, hosts: list[str]) -> ToolCallEvent:
    return ToolCallEvent(id=call_id, name="ssh_exec", input={"hosts": hosts, "command": command},
                         hosts=hosts)  # fmt: skip


def result(call_id: str, statuses: dict[str, int | None]) -> ToolResultEvent:
    hosts = {h: {"exit_status": s} for h, s in statuses.items()}
    failed = any(s != 0 for s in statuses.values())
    return ToolResultEvent(id=call_id, name="ssh_exec", text="", is_error=failed,
                           data={"hosts": hosts})  # fmt: skip


def test_a_container_is_scouts_only_where_its_command_exited_0() -> None:
    world = WorldModel()
    own = OwnWork(world)
    own.on_event(call("t1", "docker run -d --name engine img", ["spark-a", "spark-b"]))
    own.on_event(result("t1", {"spark-a": 0, "spark-b": 125}))  # spark-b: the name was taken
    assert world.created == {"spark-a": {"engine": "ssh_exec: docker run -d --name engine img"}}


def test_the_approvers_edit_is_what_ran() -> None:
    world = WorldModel()
    own = OwnWork(world)
    own.on_event(call("t1", "docker run -d --name engine img", ["spark-a"]))
    edited = {"host": "spark-a", "command": "docker run -d --name engine-2 img"}
    decision = ApprovalDecisionEvent(
        call_id="t1", fingerprint="f", decision="approved_with_edit", edited_input=edited
    )
    own.on_event(decision)
    own.on_event(result("t1", {"spark-a": 0}))
    assert list(world.created["spark-a"]) == ["engine-2"]


def test_a_refused_or_unrelated_call_records_nothing() -> None:
    world = WorldModel()
    own = OwnWork(world)
    own.on_event(call("t1", "docker run -d --name engine img", ["spark-a"]))
    own.on_event(ToolResultEvent(id="t1", name="ssh_exec", text="refused", is_error=True))
    own.on_event(call("t2", "docker ps", ["spark-a"]))
    own.on_event(result("t2", {"spark-a": 0}))
    assert world.created == {}
