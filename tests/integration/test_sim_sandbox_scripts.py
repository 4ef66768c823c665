"""Scripts in the simulated hosts' sandbox (`sh -c`, and jobs, which run as such scripts):
redirections work in the host's home and nothing outside it can be written, executed or
signalled (the host's wall, sim/fakehost/confinement.py).

SSH commands themselves stay in restricted bash; test_sim_cluster.py covers those escapes, and
test_sim_sandbox_walls.py what a real Python run by path still cannot do.
"""

from __future__ import annotations

from pathlib import Path

import asyncssh
import pytest

from sim.cluster import SimCluster
from tests.support.waiting import until
from tools.jobs.host import job_status, start_job
from tools.ssh import SSHPool
from tools.ssh.remote_command import stop_command, wrap_command


@pytest.fixture
def outside(tmp_path: Path) -> Path:
    kept = tmp_path / "outside"
    kept.mkdir()
    (kept / "x").write_text("keep")
    return kept


async def test_scripts_redirect_inside_the_host_folder(cluster: SimCluster, pool: SSHPool) -> None:
    result = await pool.run("spark-a", "echo hi > ~/note; mkdir -p ~/a/b; cat ~/note")

    assert result.stdout == "hi\n" and result.exit_status == 0
    assert (cluster.host_dir("spark-a") / "home" / "note").read_text() == "hi\n"
    assert (cluster.host_dir("spark-a") / "home" / "a" / "b").is_dir()


@pytest.mark.parametrize(
    ("script", "message"),
    [
        ("echo hi > OUT/x", "OUT/x: Permission denied"),
        ("echo hi >> OUT/new", "OUT/new: Permission denied"),
        ("mkdir OUT/d", "cannot create directory"),
        ("cd OUT && echo hi > y", "y: Permission denied"),
        ("/usr/bin/rm -f OUT/x", "/usr/bin/rm: Permission denied"),
        ("exec /bin/ls OUT", "/bin/ls: Permission denied"),
        ("kill -9 1", "kill: (1) - No such process"),
        ("enable kill", "enable: command not found"),
    ],
)
async def test_scripts_cannot_write_execute_or_signal_outside(
    pool: SSHPool, outside: Path, script: str, message: str
) -> None:
    result = await pool.run("spark-a", script.replace("OUT", str(outside)))

    assert result.exit_status != 0
    assert message.replace("OUT", str(outside)) in result.stderr
    assert (outside / "x").read_text() == "keep"
    assert sorted(p.name for p in outside.iterdir()) == ["x"]


async def test_awk_at_the_command_line_writes_only_inside_the_host_folder(
    cluster: SimCluster, pool: SSHPool, outside: Path
) -> None:
    """awk is on PATH outside scripts too (the job status poll runs it so), behind the wall."""
    inside = await pool.run("spark-a", "awk 'BEGIN { print 1 > \"made-by-awk\" }'", shell=False)
    escape = await pool.run("spark-a", f"awk 'BEGIN {{ print 1 > \"{outside}/y\" }}'", shell=False)

    assert inside.exit_status == 0
    assert (cluster.host_dir("spark-a") / "home" / "made-by-awk").read_text() == "1\n"
    assert escape.exit_status != 0 and not (outside / "y").exists()


async def test_a_jobs_writes_stay_inside_the_host_folder(
    cluster: SimCluster, pool: SSHPool, outside: Path
) -> None:
    command = f"echo inside > ~/made-by-job; (echo x > {outside}/y) && echo escaped"
    started = await start_job(pool, "spark-b", "writer", command)
    _now, records = await job_status(pool, "spark-b", ["writer"])
    for _ in range(100):
        if records[0].finished:
            break
        _now, records = await job_status(pool, "spark-b", ["writer"])

    assert started.pid is not None and records[0].state == "exited"
    assert records[0].exit_code == 1 and "escaped" not in records[0].tail
    assert f"{outside}/y: Permission denied" in records[0].tail
    assert not (outside / "y").exists()
    assert (cluster.host_dir("spark-b") / "home" / "made-by-job").read_text() == "inside\n"
    job_dir = cluster.host_dir("spark-b") / "home" / ".scout" / "jobs" / "writer"
    assert (job_dir / "exit").read_text() == "1\n"


async def test_without_the_wall_scripts_fall_back_to_restricted_bash(
    cluster: SimCluster, tmp_path: Path
) -> None:
    (cluster.host_dir("spark-a") / "sandbox" / "exec-allow").unlink()  # no wall can be built
    options = {
        "username": cluster.scenario.user,
        "client_keys": [cluster.client_key],
        "known_hosts": None,
        "agent_path": None,
        "config": None,
    }
    async with asyncssh.connect("127.0.0.1", cluster.head_port, **options) as conn:
        result = await conn.run("sh -c 'echo hi > ~/f'", stdin=asyncssh.DEVNULL)
        plain = await conn.run("sh -c 'hostname'", stdin=asyncssh.DEVNULL)
        awk = await conn.run("awk 'BEGIN { print 1 > \"f\" }'", stdin=asyncssh.DEVNULL)

    assert result.exit_status != 0
    assert "output redirection needs the sandbox's wall" in result.stderr
    assert "exec-allow" in result.stderr  # why, in the note
    assert "restricted: cannot redirect output" in result.stderr
    assert not (cluster.host_dir("spark-a") / "home" / "f").exists()
    assert plain.stdout == "spark-7d19\n" and plain.stderr == ""
    assert awk.exit_status == 126 and "awk: needs the sandbox's wall" in awk.stderr


async def test_scouts_stop_command_ends_a_nested_timeout_by_its_session(pool: SSHPool) -> None:
    """What Scout sends to stop a cancelled run works here as on a real host (grep over /proc,
    `pkill -s`), while the run's own channel is still open."""
    marker = "scout-run-00000000feedbeef"
    wrapped = wrap_command("timeout 600 sh -c 'sleep 56.4321'", timeout=300, marker=marker)
    conn = await pool.connection("spark-b")
    running = await conn.create_process(wrapped, stdin=asyncssh.DEVNULL)

    async def sleeping() -> str:
        return (await pool.run("spark-b", "pkill -0 -f '^sleep 56[.]4321' && echo running")).stdout

    probe = await until(sleeping, "the sleep to run")
    stop = await conn.run(stop_command(marker), stdin=asyncssh.DEVNULL)
    await running.wait_closed()
    after = await pool.run("spark-b", "pkill -0 -f '56[.]4321' || echo none")

    assert probe == "running\n" and stop.exit_status == 0
    assert running.exit_signal is not None and running.exit_signal[0] == "KILL"
    assert after.stdout == "none\n"
