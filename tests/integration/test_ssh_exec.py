"""The ssh_exec tool as the planner sees it: sections per host, bounded output, clear failures."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from pydantic import ValidationError

from agent.safety.redact import Redactor
from agent.safety.shell.judge import judge_shell
from tests.support.asyncssh_hosts import LocalHosts
from tests.support.no_hosts import no_hosts
from tools.base import ToolContext
from tools.risk.assessment import Risk
from tools.ssh import SSHPool
from tools.ssh_exec import SSHExec, SSHExecInput


@pytest.fixture
async def pool(tmp_path: Path) -> AsyncIterator[SSHPool]:
    hosts = LocalHosts(tmp_path)
    for name in ("spark-a", "spark-b"):
        await hosts.add(name)
    hosts.write_known_hosts("spark-a", "spark-b")
    inventory = hosts.inventory(
        jumps={"spark-b": "spark-a"},
        gone={"address": "127.0.0.1", "port": 1, "user": "tester"},
    )
    try:
        async with SSHPool(inventory, connect_attempts=1) as ssh_pool:
            yield ssh_pool
    finally:
        await hosts.close()


def context(tmp_path: Path, pool: SSHPool) -> ToolContext:
    return ToolContext(spill_dir=tmp_path / "spill")


async def test_fan_out_has_one_section_per_host(pool: SSHPool, tmp_path: Path) -> None:
    tool = SSHExec(pool, judge_shell)
    params = SSHExecInput(hosts=["spark-a", "spark-b"], command="echo $SCOUT_TEST_HOST")
    result = await tool.run(params, context(tmp_path, pool))

    assert not result.is_error
    sections = result.text.split("\n\n")
    assert sections[0].startswith("== spark-a (exit 0, ") and sections[0].endswith("==\nspark-a")
    assert sections[1].startswith("== spark-b (exit 0, ") and sections[1].endswith("==\nspark-b")
    assert result.data["hosts"]["spark-b"]["exit_status"] == 0
    assert result.data["hosts"]["spark-b"]["stdout_chars"] == len("spark-b\n")
    assert result.meta["hosts"] == ["spark-a", "spark-b"]
    assert "exit_status" not in result.meta
    assert tool.hosts(params) == ["spark-a", "spark-b"]


async def test_identical_outputs_share_one_section_that_names_the_hosts(
    pool: SSHPool, tmp_path: Path
) -> None:
    params = SSHExecInput(hosts=["spark-a", "spark-b"], command="uname -s; exit 3")
    result = await SSHExec(pool, judge_shell).run(params, context(tmp_path, pool))

    assert result.text == "== 2 hosts: spark-a, spark-b (exit 3, same output on each) ==\nLinux"
    assert result.data["hosts"]["spark-a"]["exit_status"] == 3
    assert result.data["hosts"]["spark-b"]["exit_status"] == 3
    assert result.is_error


async def test_one_failing_host_marks_the_result_but_keeps_the_others(
    pool: SSHPool, tmp_path: Path
) -> None:
    params = SSHExecInput(hosts=["spark-a", "gone", "nowhere"], command="uname -s")
    result = await SSHExec(pool, judge_shell).run(params, context(tmp_path, pool))

    assert result.is_error
    assert "== spark-a (exit 0, " in result.text and "\nLinux" in result.text
    assert "== gone (unreachable) ==\ncannot reach gone (127.0.0.1:1): Connection refused" in (
        result.text
    )
    assert "== nowhere (unknown host) ==\nunknown host 'nowhere'" in result.text
    assert result.data["hosts"]["gone"]["kind"] == "unreachable"


async def test_single_host_exit_status_and_stderr(pool: SSHPool, tmp_path: Path) -> None:
    params = SSHExecInput(host="spark-b", command="echo out; echo bad >&2; exit 2")
    result = await SSHExec(pool, judge_shell).run(params, context(tmp_path, pool))

    assert result.is_error
    assert result.meta["exit_status"] == 2
    assert "== spark-b (exit 2, " in result.text
    assert result.text.endswith("==\nout\n-- stderr --\nbad")


async def test_long_output_is_bounded_and_spilled(pool: SSHPool, tmp_path: Path) -> None:
    params = SSHExecInput(host="spark-a", command="seq 1 20000")
    result = await SSHExec(pool, judge_shell).run(params, context(tmp_path, pool))

    assert not result.is_error
    assert len(result.text) < 9_000
    assert result.text.split("\n")[1:3] == ["1", "2"]
    assert result.text.endswith("\n19999\n20000")
    spill = Path(result.data["hosts"]["spark-a"]["spill"]["stdout"])
    assert f"full output saved to {spill}" in result.text
    assert spill.read_text().splitlines() == [str(i) for i in range(1, 20001)]
    assert result.meta["truncated"] is True


async def test_spill_files_are_written_redacted(pool: SSHPool, tmp_path: Path) -> None:
    token = "hf_" + "abcdefghijklmnopqrstuvwx"
    params = SSHExecInput(host="spark-a", command=f"seq 1 5000; echo {token}; seq 1 5000")
    ctx = ToolContext(spill_dir=tmp_path / "spill", redact=Redactor().text)
    result = await SSHExec(pool, judge_shell).run(params, ctx)
    spill = Path(result.data["hosts"]["spark-a"]["spill"]["stdout"])
    text = spill.read_text()
    assert token not in text and "[REDACTED]" in text and text.startswith("1\n2\n")


@pytest.mark.slow
async def test_timeout_reports_partial_output(pool: SSHPool, tmp_path: Path) -> None:
    params = SSHExecInput(host="spark-a", command="echo partial; sleep 30", timeout=5)
    result = await SSHExec(pool, judge_shell).run(params, context(tmp_path, pool))

    assert result.is_error
    assert "== spark-a (timed out after 5 s, " in result.text
    assert "timed out after 5 s; the command was killed on the host" in result.text
    assert result.text.endswith("Partial output follows.\npartial")
    assert result.data["hosts"]["spark-a"]["timed_out"] is True


def test_input_needs_exactly_one_target() -> None:
    with pytest.raises(ValidationError, match="exactly one of `host`"):
        SSHExecInput(host="a", hosts=["b"], command="ls")
    with pytest.raises(ValidationError, match="exactly one of `host`"):
        SSHExecInput(command="ls")
    with pytest.raises(ValidationError, match="less than or equal to 3600"):
        SSHExecInput(host="a", command="ls", timeout=4000)
    with pytest.raises(ValidationError, match="not a valid environment variable name"):
        SSHExecInput(host="a", command="ls", env={"BAD-NAME": "x"})


@pytest.mark.parametrize(
    ("command", "risk"),
    [
        ("nvidia-smi", Risk.READ_ONLY),
        ("cat /proc/meminfo", Risk.READ_ONLY),
        ("docker ps -a", Risk.READ_ONLY),
        ("ip -br addr", Risk.READ_ONLY),
        ("docker rm -f vllm_node", Risk.DESTRUCTIVE),
        ("docker", Risk.MUTATING),
        ("ip link set enp1s0f0np0 up", Risk.MUTATING),
        ("nvidia-smi -pm 1", Risk.MUTATING),
        ("hostname newname", Risk.MUTATING),
        ("cat /etc/passwd | grep root", Risk.READ_ONLY),
        ("ls; rm -rf /tmp/x", Risk.DESTRUCTIVE),
        ("echo $(reboot)", Risk.DESTRUCTIVE),
        ("cat > /etc/hosts", Risk.DESTRUCTIVE),
        ("rm -rf /", Risk.DESTRUCTIVE),
        ("grep -r set /etc/ssh", Risk.READ_ONLY),
        ("ls 'unclosed", Risk.MUTATING),
    ],
)
def test_the_risk_of_ssh_exec_is_its_command_judged(command: str, risk: Risk) -> None:
    assessment = SSHExec(no_hosts(), judge_shell).risk(SSHExecInput(host="a", command=command))
    assert assessment == judge_shell(command)
    assert assessment.risk is risk and assessment.reason


def test_the_environment_and_folder_are_judged_with_the_command() -> None:
    tool = SSHExec(no_hosts(), judge_shell)
    with_env = tool.risk(SSHExecInput(host="a", command="ls", env={"LD_PRELOAD": "/x.so"}))
    assert with_env.risk is Risk.MUTATING and "LD_PRELOAD" in with_env.reason
    assert tool.risk(SSHExecInput(host="a", command="ls", cwd="/data")).risk is Risk.READ_ONLY
    into_etc = tool.risk(SSHExecInput(host="a", command="echo x > passwd", cwd="/etc"))
    assert into_etc.risk is Risk.DESTRUCTIVE
    assert (
        tool.risk(SSHExecInput(host="a", command="rm -rf x", cwd="/data")).risk is Risk.DESTRUCTIVE
    )
