"""docker_ctl over real SSH to a loopback host whose `docker` records its argv and plays replies.

The replies are what docker really prints (captured from docker 20.10/28.2 against a private
dockerd and from docker/cli's docs); the recorded argv shows exactly what reached the CLI after
the host's shell, so quoting and injection are checked where they matter.
"""

from __future__ import annotations

import shutil
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from pydantic import ValidationError

from agent.safety.shell.judge import judge_shell
from tests.support.asyncssh_hosts import LocalHosts
from tests.support.no_hosts import no_hosts
from tools.base import ToolContext, ToolResult
from tools.docker.params import DockerCtlInput
from tools.docker_ctl import DockerCtl
from tools.risk.assessment import Risk
from tools.ssh import SSHPool

CAPTURES = Path(__file__).parents[1] / "fixtures" / "recon"
PS_ROW = (
    '{"Command":"\\"sleep 300\\"","CreatedAt":"2026-12-02 11:39:35 +0000 UTC","ID":'
    '"3e4a96adbb76a49e84676455fe38be8a307cdac9e21e77742668c6ead2232d1a","Image":"local/busybox:1",'
    '"Labels":"","LocalVolumes":"0","Mounts":"","Names":"vllm_node","Networks":"none","Ports":"",'
    '"RunningFor":"1 second ago","Size":"0B","State":"running","Status":"Up 2 seconds"}\n'
)
IMAGES_ROW = (
    '{"Containers":"N/A","CreatedAt":"2026-12-02 11:39:34 +0000 UTC","CreatedSince":"1 second ago",'
    '"ID":"sha256:a771b4b4ae67b6d0c91485060d84b95c91404fa8501a5aa4e4e036ca73532330",'
    '"Repository":"local/busybox","Tag":"1","Size":"1.98MB"}\n'
)
FAKE_DOCKER = """#!/bin/bash
# Records each call's argv (one word per line, a line '--' after it), then replies.
here=$(dirname "$0")/..
{ printf '%s\\n' "$@"; echo --; } >> "$here/argv.log"
case "$1" in
  ps) [ -f "$here/ps.json" ] && cat "$here/ps.json"; exit 0 ;;
  images) [ -f "$here/images.json" ] && cat "$here/images.json"; exit 0 ;;
esac
[ -f "$here/reply.out" ] && cat "$here/reply.out"
[ -f "$here/reply.err" ] && cat "$here/reply.err" >&2
exit "$(cat "$here/reply.rc" 2>/dev/null || echo 0)"
"""


@dataclass
class FakeDockerHost:
    root: Path
    pool: SSHPool

    def reply(self, out: str = "", err: str = "", rc: int = 0) -> None:
        (self.root / "reply.out").write_text(out)
        (self.root / "reply.err").write_text(err)
        (self.root / "reply.rc").write_text(str(rc))

    def calls(self) -> list[list[str]]:
        log = self.root / "argv.log"
        text = log.read_text() if log.exists() else ""
        calls, current = [], []
        for line in text.splitlines():
            if line == "--":
                calls.append(current)
                current = []
            else:
                current.append(line)
        return calls

    async def run(self, **fields: object) -> ToolResult:
        params = DockerCtlInput.model_validate({"host": "dock", **fields})
        ctx = ToolContext(spill_dir=self.root / "spill")
        return await DockerCtl(self.pool, judge_shell).run(params, ctx)


@pytest.fixture
async def dock(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> AsyncIterator[FakeDockerHost]:
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (bin_dir / "docker").write_text(FAKE_DOCKER)
    (bin_dir / "docker").chmod(0o755)
    (tmp_path / "ps.json").write_text(PS_ROW)
    (tmp_path / "images.json").write_text(IMAGES_ROW)
    monkeypatch.setenv("PATH", f"{bin_dir}:/usr/bin:/bin")  # the host's shell inherits this
    hosts = LocalHosts(tmp_path)
    await hosts.add("dock")
    hosts.write_known_hosts("dock")
    try:
        async with SSHPool(hosts.inventory(), connect_attempts=1) as pool:
            yield FakeDockerHost(tmp_path, pool)
    finally:
        await hosts.close()


async def test_run_quotes_every_value_so_nothing_is_injected(dock: FakeDockerHost) -> None:
    canary = dock.root / "pwned"
    evil = f"'; touch {canary}; echo '$(touch {canary})`touch {canary}`"
    dock.reply(out="3e4a96adbb76a49e84676455fe38be8a307cdac9e21e77742668c6ead2232d1a\n")
    result = await dock.run(
        action="run",
        image="local/busybox:1",
        name="vllm_node",
        network="none",
        env={"MODEL": evil, "HF_TOKEN": "hf_secret_value"},
        volumes=["/data/models:/models:ro"],
        labels={"owner": "scout; rm -rf /"},
        ulimits={"memlock": "-1", "stack": "67108864"},
        gpus="all",
        ipc="host",
        shm_size="16g",
        command=["sh", "-c", "echo $MODEL > /tmp/x && sleep 300"],
    )
    assert not result.is_error, result.text
    assert not canary.exists()
    run_call = dock.calls()[0]
    assert run_call == [
        "run", "--detach", "--name=vllm_node", "--network=none", "--ipc=host", "--gpus=all",
        "--shm-size=16g", f"--env=MODEL={evil}", "--env=HF_TOKEN=hf_secret_value",
        "--volume=/data/models:/models:ro", "--ulimit=memlock=-1", "--ulimit=stack=67108864",
        "--label=owner=scout; rm -rf /", "local/busybox:1", "sh", "-c",
        "echo $MODEL > /tmp/x && sleep 300",
    ]  # fmt: skip
    assert "hf_secret_value" not in result.text
    assert "hf_secret_value" not in str(result.meta)
    assert "--env=HF_TOKEN=***" in result.text
    assert (
        result.text.splitlines()[1]
        == "started container vllm_node (3e4a96adbb76) from local/busybox:1"
    )
    assert result.data["container_id"].startswith("3e4a96adbb76")
    assert [c["names"] for c in result.data["containers"]] == [["vllm_node"]]
    assert result.data["images"][0]["repository"] == "local/busybox"
    assert result.data["host"] == "dock"


def test_names_that_could_be_options_or_shell_are_refused() -> None:
    for bad in ("-f", "x; rm -rf /", "$(id)", "a b"):
        with pytest.raises(ValidationError, match="is not a container name or ID"):
            DockerCtlInput(host="dock", action="rm", container=bad)
    with pytest.raises(ValidationError, match="is not an image reference"):
        DockerCtlInput(host="dock", action="pull", image="--all-tags")
    with pytest.raises(ValidationError, match="not a valid environment variable name"):
        DockerCtlInput(host="dock", action="exec", container="c", command="env", env={"A B": "1"})


def test_fields_must_fit_the_action() -> None:
    with pytest.raises(ValidationError, match="action 'logs' needs container"):
        DockerCtlInput(host="dock", action="logs")
    with pytest.raises(ValidationError, match="volumes do\\(es\\) not apply to action 'stop'"):
        DockerCtlInput(host="dock", action="stop", container="c", volumes=["/a:/b"])
    with pytest.raises(ValidationError, match="inspect needs exactly one of container or image"):
        DockerCtlInput(host="dock", action="inspect")


def test_risk_by_action_and_the_command_inside_exec() -> None:
    tool = DockerCtl(no_hosts(), judge_shell)

    def params(**fields: object) -> DockerCtlInput:
        return DockerCtlInput.model_validate({"host": "dock", **fields})

    assert tool.risk(params(action="ps")).risk is Risk.READ_ONLY
    assert tool.risk(params(action="logs", container="c")).risk is Risk.READ_ONLY
    assert tool.risk(params(action="run", image="i")).risk is Risk.MUTATING
    assert tool.risk(params(action="stop", container="c")).risk is Risk.DESTRUCTIVE
    assert tool.risk(params(action="rmi", image="i")).reason == "docker rmi is destructive"
    exec_shell = params(action="exec", container="c", command=["sh", "-c", "rm -rf /data"])
    assert tool.risk(exec_shell).risk is Risk.DESTRUCTIVE
    assert "'rm' deletes files" in tool.risk(exec_shell).reason
    assert tool.risk(exec_shell).reason.endswith("(inside docker exec c)")
    exec_argv = params(action="exec", container="c", command="nvidia-smi -L")
    assert tool.risk(exec_argv).risk is Risk.MUTATING  # exec itself changes the container
    assert tool.risk(exec_argv).reason == "docker exec is mutating"
    assert tool.hosts(exec_argv) == ["dock"]


async def test_ps_is_a_table_with_typed_rows(dock: FakeDockerHost) -> None:
    result = await dock.run(action="ps")
    assert not result.is_error
    header, row = result.text.splitlines()[1:]
    assert header.split() == ["NAME", "ID", "IMAGE", "STATE", "STATUS", "PORTS"]
    assert row.split() == ["vllm_node", "3e4a96adbb76", "local/busybox:1", "running", "Up", "2",
                           "seconds"]  # fmt: skip
    assert result.data["containers"][0]["state"] == "running"
    assert dock.calls() == [["ps", "-a", "--no-trunc", "--format={{json .}}"]]


async def test_ps_reads_the_docker_cli_documented_json(dock: FakeDockerHost) -> None:
    documented = (CAPTURES / "generic_docker_ps_format_json.txt").read_text().partition("\n")[2]
    (dock.root / "ps.json").write_text(documented)
    result = await dock.run(action="ps")
    assert result.data["containers"][0]["names"] == ["boring_keldysh"]
    assert "boring_keldysh  a762a2b37a1d  nginx" in result.text


async def test_no_such_container_lists_the_existing_ones(dock: FakeDockerHost) -> None:
    dock.reply(err="Error response from daemon: No such container: vllm\n", rc=1)
    result = await dock.run(action="logs", container="vllm", tail=50)
    assert result.is_error
    assert result.text.splitlines()[1] == (
        "no such container vllm on dock. Existing containers: vllm_node. Use one of these names "
        "or IDs (docker_ctl ps lists them with their state)."
    )
    assert result.data["failure"] == {"kind": "no_container", "subject": "vllm"}
    assert dock.calls()[0] == ["logs", "--tail=50", "vllm"]


async def test_permission_denied_says_how_to_join_the_docker_group(dock: FakeDockerHost) -> None:
    dock.reply(
        err="permission denied while trying to connect to the Docker daemon socket at "
        'unix:///var/run/docker.sock: Get "http://%2Fvar%2Frun%2Fdocker.sock/v1.50/containers/'
        'json": dial unix /var/run/docker.sock: connect: permission denied\n',
        rc=1,
    )
    result = await dock.run(action="stop", container="vllm_node", timeout=10)
    assert result.is_error
    assert (
        "the SSH user is not in the docker group; fix: sudo usermod -aG docker $USER, then log "
        "in again (or newgrp docker)"
    ) in result.text
    assert dock.calls()[0] == ["stop", "--time=10", "vllm_node"]


async def test_daemon_down_and_docker_missing(
    dock: FakeDockerHost, monkeypatch: pytest.MonkeyPatch
) -> None:
    dock.reply(
        err="Cannot connect to the Docker daemon at unix:///var/run/docker.sock. Is the docker "
        "daemon running?\n",
        rc=1,
    )
    down = await dock.run(action="start", container="vllm_node")
    assert down.is_error
    assert "the Docker daemon is not running on dock (Cannot connect to the Docker daemon" in (
        down.text
    )
    bare = dock.root / "bare-bin"  # a PATH with the shell and `timeout` but no docker
    bare.mkdir()
    for tool in ("bash", "sh", "timeout"):
        (bare / tool).symlink_to(shutil.which(tool) or tool)
    monkeypatch.setenv("PATH", str(bare))
    missing = await dock.run(action="ps")
    assert missing.is_error
    assert "docker is not installed on dock (command not found for the SSH user)" in missing.text


async def test_name_in_use_names_the_holder(dock: FakeDockerHost) -> None:
    dock.reply(
        err='docker: Error response from daemon: Conflict. The container name "/vllm_node" is '
        'already in use by container "3e4a96adbb76a49e84676455fe38be8a307cdac9e21e77742668c6ead22'
        '32d1a". You have to remove (or rename) that container to be able to reuse that name.\n',
        rc=125,
    )
    result = await dock.run(action="run", image="local/busybox:1", name="vllm_node")
    assert result.is_error
    assert result.text.splitlines()[1] == (
        "container name vllm_node is already in use by 3e4a96adbb76; remove it (docker_ctl rm) "
        "or choose another name."
    )


async def test_image_that_cannot_be_pulled_lists_local_images(dock: FakeDockerHost) -> None:
    dock.reply(
        err="Unable to find image 'vllm/vllm-openai:v0.11.0' locally\ndocker: Error response "
        'from daemon: Get "https://registry-1.docker.io/v2/": dial tcp: lookup '
        "registry-1.docker.io: no such host\n",
        rc=125,
    )
    result = await dock.run(action="run", image="vllm/vllm-openai:v0.11.0", network="host")
    assert result.is_error
    assert result.text.splitlines()[1].startswith(
        "image vllm/vllm-openai:v0.11.0 is not on dock and could not be pulled: "
        'Get "https://registry-1.docker.io/v2/": dial tcp'
    )
    assert result.text.endswith("Images on dock: local/busybox:1.")


async def test_exec_failure_reports_the_inner_exit_status(dock: FakeDockerHost) -> None:
    dock.reply(out="partial\n", err="sh: nvidia-smi: not found\n", rc=127)
    result = await dock.run(action="exec", container="vllm_node", command="nvidia-smi -L")
    assert result.is_error
    assert result.text.splitlines()[1:] == [
        "the command in vllm_node exited with status 127:",
        "partial",
        "sh: nvidia-smi: not found",
    ]


async def test_long_logs_are_cut_and_spilled(dock: FakeDockerHost) -> None:
    dock.reply(out="".join(f"line {i}\n" for i in range(5000)))
    result = await dock.run(action="logs", container="vllm_node", tail=5000)
    assert not result.is_error
    assert result.meta["truncated"] is True
    assert "line 0\n" in result.text and result.text.endswith("line 4999")
    spilled = list((dock.root / "spill").glob("docker_ctl-dock-logs-*.txt"))
    assert len(spilled) == 1 and spilled[0].read_text().count("\n") == 4999
