"""A passphrase-protected key as the operator meets it: `scout recon` asks once at the terminal
(tmux, typed as a person types), and without a terminal says in one line to use ssh-agent. The
passphrase is never shown, logged or written."""

from __future__ import annotations

import os
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest
import yaml

from agent.standin.server import MessagesAPIServer
from tests.support.login_keys import PASSPHRASE, LoginKeys, login_keys
from tests.support.scout_cli import SCOUT
from tests.support.session_kit import text_turn, tool_turn
from tests.support.sshd_topology import Topology
from tests.support.tmux import TmuxScreen, tmux_missing

pytestmark = pytest.mark.system


@pytest.fixture
def keys(sshd_topology: Topology, tmp_path: Path) -> Iterator[LoginKeys]:
    with login_keys(sshd_topology, tmp_path) as made:
        yield made


def write_inventory(topology: Topology, key: Path, path: Path) -> Path:
    data = topology.inventory_data()
    data["defaults"] = {"user": "root", "identity_file": str(key)}
    path.write_text(yaml.safe_dump(data))
    return path


def everything_written(*folders: Path) -> str:
    return "".join(
        p.read_text(errors="replace") for f in folders for p in f.rglob("*") if p.is_file()
    )


@pytest.mark.skipif(tmux_missing() is not None, reason=tmux_missing() or "")
async def test_recon_asks_for_the_passphrase_once_at_the_terminal(
    sshd_topology: Topology, keys: LoginKeys, tmp_path: Path
) -> None:
    inventory = write_inventory(sshd_topology, keys.locked, tmp_path / "inventory.yaml")
    scout_home = tmp_path / "scout-home"
    env = f"env -u SSH_AUTH_SOCK HOME={keys.home} SCOUT_HOME={scout_home} NO_COLOR=1"
    screen = TmuxScreen(tmp_path / "tmux.sock", width=120, height=40)
    screen.start(f'{env} {SCOUT} recon --inventory {inventory}; echo "recon exit=$?"; sleep 30')
    try:
        await screen.wait_for(f"Enter passphrase for key '{keys.locked}':")
        screen.send("-l", PASSPHRASE)
        screen.send("Enter")
        shown = await screen.wait_for("recon exit=")
    finally:
        screen.kill()
    assert "recon exit=0" in shown, shown
    assert shown.count("passphrase") == 1  # one question for both hosts
    assert "unreachable" not in shown
    assert PASSPHRASE not in shown
    assert PASSPHRASE not in everything_written(scout_home, keys.home)


def test_recon_without_a_terminal_says_to_load_the_key_into_the_agent(
    sshd_topology: Topology, keys: LoginKeys, tmp_path: Path
) -> None:
    inventory = write_inventory(sshd_topology, keys.locked, tmp_path / "inventory.yaml")
    env = {k: v for k, v in os.environ.items() if k != "SSH_AUTH_SOCK"}
    env.update(HOME=str(keys.home), SCOUT_HOME=str(tmp_path / "scout-home"), NO_COLOR="1")
    done = subprocess.run(
        [SCOUT, "recon", "--inventory", str(inventory), "--hosts", "head"],
        env={**env, "COLUMNS": "1000"},
        capture_output=True,
        text=True,
        timeout=120,
        stdin=subprocess.DEVNULL,
        start_new_session=True,  # no controlling terminal, as under cron or a CI runner
    )
    assert done.returncode == 1
    [line] = done.stderr.strip().splitlines()
    assert line.startswith("scout recon: head unreachable: head (")
    assert f"key {keys.locked} could not be used (it needs its passphrase and there is no" in line
    assert line.endswith(
        f"Load it into ssh-agent (`ssh-add {keys.locked}`) and run Scout where SSH_AUTH_SOCK "
        "points to that agent."
    )


CHAT_SCRIPT = [
    tool_turn(
        [("toolu_1", "ssh_exec", {"hosts": ["head", "worker"], "command": "hostname"})],
        text="Asking both hosts their names.",
    ),
    text_turn("Both hosts answered."),
]


@pytest.mark.skipif(tmux_missing() is not None, reason=tmux_missing() or "")
async def test_chat_asks_for_the_passphrase_once_and_records_none_of_it(
    sshd_topology: Topology, keys: LoginKeys, tmp_path: Path
) -> None:
    inventory = write_inventory(sshd_topology, keys.locked, tmp_path / "inventory.yaml")
    scout_home = tmp_path / "scout-home"
    with MessagesAPIServer(CHAT_SCRIPT) as api:
        env = (
            f"env -u SSH_AUTH_SOCK HOME={keys.home} SCOUT_HOME={scout_home} NO_COLOR=1 "
            f"ANTHROPIC_API_KEY=test ANTHROPIC_BASE_URL={api.url}"
        )
        screen = TmuxScreen(tmp_path / "tmux.sock", width=120, height=40)
        screen.start(f"{env} {SCOUT} chat --inventory {inventory}; sleep 30")
        try:
            await screen.wait_for("scout ›")
            screen.send("what are the hosts called?", "Enter")
            await screen.wait_for(f"Enter passphrase for key '{keys.locked}':")
            screen.send("-l", "wrong guess")
            screen.send("Enter")
            await screen.wait_for(f"Bad passphrase, try again for '{keys.locked}':")
            screen.send("-l", PASSPHRASE)
            screen.send("Enter")
            shown = await screen.wait_for("Both hosts answered.")
            screen.send("C-d")
            await screen.wait_for("transcript saved")
        finally:
            screen.kill()
    assert shown.count("Enter passphrase") == 1
    [row] = [line for line in shown.splitlines() if "ssh_exec" in line]
    assert row.startswith("✓ head +1") and row.endswith("done")
    assert PASSPHRASE not in shown and "wrong guess" not in shown
    written = everything_written(scout_home, keys.home)
    assert "== head (exit 0" in written and "== worker (exit 0" in written  # the transcript
    assert PASSPHRASE not in written and "wrong guess" not in written


def test_headless_run_tells_the_model_and_the_operator_to_use_the_agent(
    sshd_topology: Topology, keys: LoginKeys, tmp_path: Path
) -> None:
    inventory = write_inventory(sshd_topology, keys.locked, tmp_path / "inventory.yaml")
    script = [
        tool_turn([("toolu_1", "ssh_exec", {"host": "head", "command": "hostname"})]),
        text_turn("The head refused the key."),
    ]
    env = {k: v for k, v in os.environ.items() if k != "SSH_AUTH_SOCK"}
    with MessagesAPIServer(script) as api:
        env.update(
            HOME=str(keys.home),
            SCOUT_HOME=str(tmp_path / "scout-home"),
            ANTHROPIC_API_KEY="test",
            ANTHROPIC_BASE_URL=api.url,
        )
        done = subprocess.run(
            [
                SCOUT,
                "run",
                "--goal",
                "name the head",
                "--approvals",
                "ci",
                "--inventory",
                inventory,
            ],
            env=env,
            capture_output=True,
            text=True,
            timeout=120,
            stdin=subprocess.DEVNULL,
            start_new_session=True,
        )
        posts = [r.body for r in api.requests if r.path == "/v1/messages"]
    assert done.returncode == 0, done.stderr
    [result] = posts[1]["messages"][-1]["content"]
    assert result["is_error"]
    [line] = [line for line in result["content"].splitlines() if "refused login" in line]
    assert f"key {keys.locked} could not be used (it needs its passphrase" in line
    assert line.endswith(
        f"Load it into ssh-agent (`ssh-add {keys.locked}`) and run Scout where SSH_AUTH_SOCK "
        "points to that agent."
    )
    assert "Load it into ssh-agent" in done.stdout  # the event stream the operator reads
