"""docker inside the wall, through its read-only proxy, against a real dockerd over real sshd.

The private engine (tests/support/dockerd.py) listens on a unix socket that sshd's sessions
name in DOCKER_HOST, as a host's docker.sock. Inside the wall that socket stays closed; the
helper starts tools/wall/host_docker_proxy.py for the call and points the client at it. Reads
print what they print without the wall; every change (run, rm, kill, exec, create, pull, a
POST by hand with the call's own token) fails with the proxy's reason, and the engine's state
is the same afterwards; the raw socket refuses a connect inside the wall.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import pytest

from agent.safety.shell.judge import judge_shell
from tests.support.dockerd import IMAGE, DockerHost, dockerd_unavailable_reason, start_docker_host
from tools.base import ToolContext
from tools.risk.assessment import Risk
from tools.ssh import Inventory, SSHPool
from tools.ssh_exec import SSHExec, SSHExecInput
from tools.wall import WallSpec
from tools.wall.host_docker_proxy import TOKEN_HEADER
from tools.wall.host_landlock import landlock_abi

pytestmark = pytest.mark.system
ABIS = sorted({abi for abi in (1, 4, 5, landlock_abi()) if 0 < abi <= landlock_abi()})

KEPT = "scoutwall-kept"
REFUSED = "refused by the wall's read-only docker proxy"
READ_TOKEN = (  # the call's own token, from the client config the helper wrote for it
    'python3 -c \'import json, os; print(json.load(open(os.environ["DOCKER_CONFIG"] '
    f'+ "/config.json"))["HttpHeaders"]["{TOKEN_HEADER}"])\''
)
READS = (
    "docker ps -a --no-trunc --format '{{.ID}} {{.Names}} {{.Image}} {{.Command}}'",
    "docker container ls -q",
    "docker images --format '{{.Repository}}:{{.Tag}} {{.ID}} {{.Size}}'",
    "docker image inspect --format '{{.Id}} {{.Os}}' " + IMAGE,
    f"docker inspect --format '{{{{.Name}}}} {{{{.State.Status}}}} {{{{.Config.Cmd}}}}' {KEPT}",
    f"docker logs --tail 5 {KEPT}",
    f"docker stats --no-stream --format '{{{{.Name}}}} {{{{.PIDs}}}}' {KEPT}",
    f"docker top {KEPT} -o pid,comm",
    "docker info --format '{{.ID}} {{.Containers}} {{.Images}} {{.Driver}}'",
    "docker version --format '{{.Server.Version}} {{.Server.APIVersion}}'",
    "docker network ls --format '{{.Name}} {{.Driver}}'",
    "docker volume ls",
    "docker system df --format '{{.Type}} {{.TotalCount}}'",
    "docker stats --no-stream -a --format '{{.Name}}'",
    f"docker diff {KEPT}",
    f"docker port {KEPT}; docker ps -q --filter name={KEPT} | wc -l",
    f"docker history --format '{{{{.CreatedBy}}}} {{{{.Size}}}}' {IMAGE}",
    f"docker cp {KEPT}:/bin/busybox - | wc -c",
    f"docker container inspect {KEPT} | grep -c Running",
)
CHANGES = (
    f"docker run --rm --network none {IMAGE} true",
    f"docker create --network none --name scoutwall-new {IMAGE} true",
    f"docker rm -f {KEPT}",
    f"docker kill {KEPT}",
    f"docker exec {KEPT} touch /changed",
    f"docker rename {KEPT} scoutwall-renamed",
    f"docker tag {IMAGE} local/scoutwall:changed",
    "docker pull local/absent:1",
    "docker network create scoutwall-net",
    "docker volume create scoutwall-vol",
    "docker image prune -af",
    f"docker logs -f {KEPT}",
    f"docker stats {KEPT}",
)


@pytest.fixture(scope="module")
def docker_host() -> Iterator[DockerHost]:
    reason = dockerd_unavailable_reason()
    if reason is not None:
        pytest.skip(f"real-dockerd system tests skipped: {reason}")
    if landlock_abi() < 1:
        pytest.skip("needs a kernel with Landlock")
    host = start_docker_host()
    try:
        host.docker("run", "-d", "--network", "none", "--name", KEPT, IMAGE,
                    "sh", "-c", "echo kept-line; echo x > /kept; exec sleep 3600")  # fmt: skip
        yield host
    finally:
        host.teardown()


@pytest.fixture
async def pool(docker_host: DockerHost) -> AsyncIterator[SSHPool]:
    async with SSHPool(Inventory.from_dict(docker_host.inventory_data())) as opened:
        yield opened


def engine_state(host: DockerHost) -> list[str]:
    """What a change would show: containers (with their state), images, networks, volumes."""
    shown = [
        host.docker("ps", "-a", "--no-trunc", "--format", "{{.ID}} {{.Names}} {{.State}}"),
        host.docker("images", "-a", "--no-trunc", "--format", "{{.Repository}}:{{.Tag}} {{.ID}}"),
        host.docker("network", "ls", "-q"),
        host.docker("volume", "ls", "-q"),
        host.docker("exec", KEPT, "ls", "/"),
    ]
    return [done.stdout for done in shown]


async def walled(
    pool: SSHPool, command: str, abi: int | None = None, host: str = "dock"
) -> tuple[int | None, str, str]:
    """`command` inside the wall with the docker proxy (built as Landlock `abi` would)."""
    wall = WallSpec(scratch=True, docker=True, max_abi=abi)
    result = await pool.run(host, command, timeout=30, wall=wall)
    assert result.unwalled is None, result.unwalled
    assert result.walled
    return result.exit_status, result.stdout, result.stderr


async def test_docker_reads_inside_the_wall_print_what_they_print_outside(pool: SSHPool) -> None:
    said = await walled(pool, 'echo "$SCOUT_WALL"')
    assert "docker-read-proxy" in said[1]
    for command in READS:
        status, out, err = await walled(pool, command)
        bare = await pool.run("dock", command, timeout=30)
        assert (status, err) == (0, ""), (command, err)
        assert bare.exit_status == 0 and out == bare.stdout, command
        assert out.strip(), command


@pytest.mark.parametrize("abi", ABIS)
async def test_every_change_fails_at_the_proxy_and_the_engine_is_unchanged(
    abi: int, pool: SSHPool, docker_host: DockerHost
) -> None:
    before = engine_state(docker_host)
    _, said, _ = await walled(pool, 'echo "$SCOUT_WALL"', abi)
    assert f"landlock-abi-{abi}," in said and "docker-read-proxy" in said
    for command in CHANGES:
        status, out, err = await walled(pool, command, abi)
        assert status != 0 and REFUSED in err, (command, out, err)
    assert engine_state(docker_host) == before
    # the control: the same engine takes a change without the wall (so the test could fail)
    assert (await pool.run("dock", "docker volume create scoutwall-control")).exit_status == 0
    assert engine_state(docker_host) != before
    docker_host.docker("volume", "rm", "scoutwall-control")


async def test_the_socket_stays_closed_and_a_forged_request_is_refused(
    pool: SSHPool, docker_host: DockerHost
) -> None:
    before = engine_state(docker_host)
    raw = f"curl -s --unix-socket {docker_host.socket} -X POST http://d/volumes/create"
    _, out, _ = await walled(pool, raw + " -d '{}'; echo rc=$?")
    assert "rc=7" in out  # curl: failed to connect (socket(AF_UNIX) is refused)
    api = "http://127.0.0.1:${DOCKER_HOST##*:}"  # where the client was pointed
    with_token = f'curl -s -H "{TOKEN_HEADER}: $({READ_TOKEN})"'
    forged = {
        f"{with_token} -X POST {api}/volumes/create": "POST",
        f"{with_token} {api}/containers/{KEPT}/attach/ws": "list of read endpoints",
        f"{with_token} -H 'Connection: Upgrade' -H 'Upgrade: tcp' {api}/_ping": "upgrades",
        f"{with_token} --data-binary x -X GET {api}/info": "body",
        f"{with_token} --path-as-is {api}/v1.41/containers/../volumes/create": "plain API path",
        f"curl -s {api}/_ping": "no token",
    }
    for command, why in forged.items():
        _, out, _ = await walled(pool, command)
        assert REFUSED in out and why in out, (command, out)
    _, out, _ = await walled(pool, f"{with_token} {api}/_ping")
    assert out == "OK"  # the forged requests were refused for what they asked, not the token
    assert engine_state(docker_host) == before


async def test_ssh_exec_runs_a_docker_read_walled_unasked_and_a_change_fails(
    pool: SSHPool, tmp_path: Path
) -> None:
    tool = SSHExec(pool, judge_shell)
    ctx = ToolContext(spill_dir=tmp_path, wall=True)
    read = SSHExecInput(host="dock", command=f"docker inspect -f '{{{{.State.Running}}}}' {KEPT}")
    assert tool.risk(read).risk == Risk.READ_ONLY
    done = await tool.run(read, ctx)
    assert not done.is_error and "true" in done.text and done.meta["walled"] == {"dock": True}
    misread = SSHExecInput(host="dock", command=f"docker stop {KEPT}")  # as if the gate erred
    done = await tool.run(misread, ctx)
    assert done.is_error and REFUSED in done.text


async def test_the_proxy_reaches_the_daemon_only_with_the_caller_s_own_rights(
    docker_host: DockerHost,
) -> None:
    """A user outside the socket's group meets the same refusal through the proxy as without
    the wall: the proxy runs with the caller's rights, never the helper's or root's."""
    user = docker_host.unprivileged_user
    assert user is not None
    # every session's SCOUT_WALL_DIR (tests/support/sshd.py), root's too: open to all as /tmp
    # is, so the user installs the helper where root has not yet and reads it where root has
    helpers = docker_host.root / "wall"
    helpers.mkdir(exist_ok=True)
    helpers.chmod(0o1777)
    data = docker_host.inventory_data(user=user)
    async with SSHPool(Inventory.from_dict(data)) as user_pool:
        status, _, err = await walled(user_pool, "docker ps")
        bare = await user_pool.run("dock", "docker ps", timeout=30)
        # Landlock ABI 1 and no root: no TCP filter could hold the proxy's port, so there is
        # no proxy, and the call still runs walled (docker meets the closed socket)
        _, said, _ = await walled(user_pool, 'echo "$SCOUT_WALL"; docker ps', abi=1)
    assert status != 0 and "cannot reach the docker daemon" in err and "Permission denied" in err
    assert bare.exit_status != 0 and "permission denied" in bare.stderr
    assert "no-docker-proxy" in said and "docker-read-proxy" not in said
