"""docker_ctl against a real, private dockerd, reached through a real sshd on loopback.

The engine has no network of its own (no bridge, no iptables); containers run with
`--network none`; the only image is busybox imported from this machine; any registry access goes
to a closed loopback port. After the module, `docker0` must not exist.
"""

from __future__ import annotations

import asyncio
import subprocess
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import pytest

from agent.safety.shell.judge import judge_shell
from tests.support.dockerd import IMAGE, DockerHost, dockerd_unavailable_reason, start_docker_host
from tools.base import ToolContext, ToolResult
from tools.docker.params import DockerCtlInput
from tools.docker_ctl import DockerCtl
from tools.ssh import Inventory, SSHPool

pytestmark = pytest.mark.system


def docker0_exists() -> bool:
    return subprocess.run(["ip", "link", "show", "docker0"], capture_output=True).returncode == 0


@pytest.fixture(scope="module")
def docker_host() -> Iterator[DockerHost]:
    reason = dockerd_unavailable_reason()
    if reason is not None:
        pytest.skip(f"real-dockerd system tests skipped: {reason}")
    had_docker0 = docker0_exists()
    host = start_docker_host()
    try:
        yield host
    finally:
        host.teardown()
    assert not host.root.exists()
    if not had_docker0:
        assert not docker0_exists(), "the tests created docker0: the machine's network changed"


class Dock:
    def __init__(self, pool: SSHPool, spill: Path) -> None:
        self.pool = pool
        self.spill = spill

    async def __call__(self, **fields: object) -> ToolResult:
        params = DockerCtlInput.model_validate({"host": "dock", **fields})
        return await DockerCtl(self.pool, judge_shell).run(
            params, ToolContext(spill_dir=self.spill)
        )


@pytest.fixture
async def dock(docker_host: DockerHost, tmp_path: Path) -> AsyncIterator[Dock]:
    async with SSHPool(Inventory.from_dict(docker_host.inventory_data())) as pool:
        yield Dock(pool, tmp_path)


def names(result: ToolResult) -> list[str]:
    return [name for row in result.data["containers"] for name in row["names"]]


async def test_run_ps_logs_exec_stop_rm(dock: Dock, docker_host: DockerHost) -> None:
    loop = "i=0; while true; do echo tick $i; i=$((i+1)); sleep 0.1; done"
    run = await dock(
        action="run", image=IMAGE, name="ticker", network="none", command=["sh", "-c", loop]
    )
    assert not run.is_error, run.text
    assert run.text.splitlines()[1].startswith("started container ticker (")
    assert run.data["containers"][0]["names"] == ["ticker"]

    ps = await dock(action="ps")
    assert not ps.is_error, ps.text
    row = next(line for line in ps.text.splitlines() if line.startswith("ticker "))
    assert row.split()[2:4] == [IMAGE, "running"]
    assert names(ps) == ["ticker"]

    for _ in range(100):
        logs = await dock(action="logs", container="ticker", tail=5)
        if "tick 2" in logs.text:
            break
        await asyncio.sleep(0.05)
    assert not logs.is_error, logs.text
    assert "tick 2" in logs.text
    assert len(logs.text.splitlines()) <= 6  # the command line and at most 5 log lines

    hi = await dock(action="exec", container="ticker", command="echo hi")
    assert not hi.is_error, hi.text
    assert hi.text.splitlines()[1:] == ["hi"]

    stop = await dock(action="stop", container="ticker", timeout=1)
    assert not stop.is_error, stop.text
    assert stop.text.splitlines()[1] == "stopped ticker"
    assert stop.data["containers"][0]["state"] == "exited"

    rm = await dock(action="rm", container="ticker")
    assert not rm.is_error, rm.text
    assert rm.text.splitlines()[1] == "removed ticker; 0 container(s) left"
    assert docker_host.docker("ps", "-aq").stdout == ""


async def test_values_reach_the_container_literally(dock: Dock, docker_host: DockerHost) -> None:
    canary = docker_host.root / "pwned"
    evil = f"'; touch {canary}; '$(touch {canary})`touch {canary}`"
    run = await dock(
        action="run",
        image=IMAGE,
        name="literal",
        network="none",
        auto_remove=True,
        detach=False,
        env={"EVIL": evil},
        labels={"note": "a; b"},
        command=["sh", "-c", 'printf "%s\\n" "$EVIL"'],
    )
    assert not run.is_error, run.text
    assert run.text.splitlines()[1:] == [evil]
    assert not canary.exists()


async def test_inspect_and_images(dock: Dock) -> None:
    images = await dock(action="images")
    assert not images.is_error, images.text
    assert [i["repository"] + ":" + i["tag"] for i in images.data["images"]] == [IMAGE]
    assert images.text.splitlines()[2].startswith(f"{IMAGE}  ")

    run = await dock(
        action="run", image=IMAGE, name="probe", network="none", command="sleep 300",
        env={"HF_TOKEN": "hf_do_not_show", "MODE": "test"}, labels={"scout": "yes"},
    )  # fmt: skip
    assert not run.is_error, run.text
    try:
        inspect = await dock(action="inspect", container="probe")
        assert not inspect.is_error, inspect.text
        details = inspect.data["container"]
        assert (details["name"], details["image"], details["running"]) == ("probe", IMAGE, True)
        assert details["network_mode"] == "none"
        assert details["env"]["HF_TOKEN"] == "***" and details["env"]["MODE"] == "test"
        assert "hf_do_not_show" not in inspect.text + run.text
        assert "state: running" in inspect.text.splitlines()
    finally:
        removed = await dock(action="rm", container="probe", force=True)
    assert not removed.is_error, removed.text


async def test_known_failures_are_explained(dock: Dock) -> None:
    keeper = await dock(
        action="run", image=IMAGE, name="keeper", network="none", command="sleep 300"
    )
    assert not keeper.is_error, keeper.text
    try:
        missing = await dock(action="stop", container="nope", timeout=1)
        assert missing.is_error
        assert missing.text.splitlines()[1].startswith(
            "no such container nope on dock. Existing containers: keeper."
        )

        clash = await dock(action="run", image=IMAGE, name="keeper", network="none", command="true")
        assert clash.is_error
        holder = keeper.data["container_id"][:12]
        assert clash.text.splitlines()[1] == (
            f"container name keeper is already in use by {holder}; remove it (docker_ctl rm) or "
            "choose another name."
        ), clash.text

        never = await dock(
            action="run", image="local/absent:1", network="none", pull="never", command="true"
        )
        assert never.is_error
        assert never.text.splitlines()[1] == (
            "image local/absent:1 is not on dock, and pulling was turned off (pull: never). "
            f"Images on dock: {IMAGE}."
        )

        unpullable = await dock(action="pull", image="local/absent:1")
        assert unpullable.is_error
        assert unpullable.text.splitlines()[1].startswith(
            "image local/absent:1 is not on dock and could not be pulled: "
        )
        assert unpullable.text.endswith(f"Images on dock: {IMAGE}.")
    finally:
        await dock(action="rm", container="keeper", force=True)


async def test_socket_permission_denied_for_a_user_outside_the_docker_group(
    docker_host: DockerHost, tmp_path: Path
) -> None:
    """The socket is root:root 0660; the unprivileged user's own session meets the real check."""
    assert docker_host.unprivileged_user is not None
    data = docker_host.inventory_data(user=docker_host.unprivileged_user)
    async with SSHPool(Inventory.from_dict(data)) as pool:
        result = await Dock(pool, tmp_path)(action="ps")
    assert result.is_error
    assert result.text.splitlines()[1].startswith(
        "permission denied on the Docker socket of dock: the SSH user is not in the docker group; "
        "fix: sudo usermod -aG docker $USER, then log in again (or newgrp docker)."
    )
