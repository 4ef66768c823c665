"""`scout recon` loads what probing and printing need, not a session's machinery: the builder,
the rule engine, the gate, the shell classifier and the deployment planner stay unimported
(they cost recon a third of its start-up). Building a session does load them; that case is here
too, so the check can fail. A host OpenSSH's client answers for (here: refuses at once) costs
recon neither asyncssh nor structlog, and is tried once, as `ssh` tries it."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

UNUSED_BY_RECON = (
    "agent.runtime.builder",
    "agent.safety.rules",
    "agent.safety.gate",
    "agent.safety.shell.classifier",
    "agent.loop.session",
    "tools.plan_deployment",
)
# the pool's client and the logging library, which recon over OpenSSH never needs
UNUSED_OVER_OPENSSH = ("asyncssh", "cryptography", "structlog", "tools.ssh.pool")
# Says on stderr which of those modules this process imported.
REPORT = (
    "import sys\n"
    f"print('loaded:', sorted(set({UNUSED_BY_RECON!r}) & set(sys.modules)), file=sys.stderr)\n"
    f"print('over ssh:', sorted(set({UNUSED_OVER_OPENSSH!r}) & set(sys.modules)), "
    "file=sys.stderr)\n"
)
RECON = "import sys\nfrom agent.faces.cli import main\nmain(sys.argv[1:])\n" + REPORT


def _run(code: str, argv: list[str], home: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "SCOUT_HOME": str(home), "COLUMNS": "300"}
    env.pop("SCOUT_SETTINGS", None)
    return subprocess.run(
        [sys.executable, "-c", code, *argv],
        capture_output=True, text=True, timeout=120, env=env, stdin=subprocess.DEVNULL,
    )  # fmt: skip


def _line(done: subprocess.CompletedProcess[str], start: str) -> str:
    (line,) = [line for line in done.stderr.splitlines() if line.startswith(start)]
    return line


def _loaded(code: str, argv: list[str], home: Path) -> str:
    return _line(_run(code, argv, home), "loaded:")


@pytest.fixture
def closed_inventory(tmp_path: Path, closed_port: int) -> Path:
    inventory = tmp_path / "closed.yaml"
    inventory.write_text(f"hosts:\n  a: {{address: 127.0.0.1, port: {closed_port}}}\n")
    return inventory


def test_recon_loads_no_session_machinery(closed_inventory: Path, tmp_path: Path) -> None:
    argv = ["recon", "--inventory", str(closed_inventory)]
    assert _loaded(RECON, argv, tmp_path / "home") == "loaded: []"


def test_a_settings_file_without_rules_loads_no_rule_engine(
    closed_inventory: Path, tmp_path: Path
) -> None:
    home = tmp_path / "home"
    home.mkdir()
    (home / "settings.yaml").write_text("mode: ask\nrules: {allow: [], deny: []}\n")
    argv = ["recon", "--inventory", str(closed_inventory)]
    assert _loaded(RECON, argv, home) == "loaded: []"


@pytest.mark.slow
def test_building_a_session_loads_it(tmp_path: Path) -> None:
    code = "import agent.runtime.builder\n" + REPORT
    assert _loaded(code, [], tmp_path / "home") == f"loaded: {sorted(UNUSED_BY_RECON)!r}"


@pytest.mark.skipif(shutil.which("ssh") is None, reason="OpenSSH's client is not installed")
def test_a_refused_host_is_said_once_without_the_pool_or_structlog(
    closed_inventory: Path, tmp_path: Path
) -> None:
    done = _run(RECON, ["recon", "--inventory", str(closed_inventory)], tmp_path / "home")
    port = closed_inventory.read_text().split("port: ")[1].split("}")[0]
    said = _line(done, "scout recon: a unreachable:")
    assert said == (
        f"scout recon: a unreachable: cannot reach a (127.0.0.1:{port}): Connection refused; "
        f"check that the host is up, that 127.0.0.1 and port {port} are right, and that sshd "
        "is listening there."
    )
    assert _line(done, "over ssh:") == "over ssh: []"  # the pool never tried it a second time


@pytest.mark.slow
def test_a_session_loads_the_pool_and_structlog(tmp_path: Path) -> None:
    code = "import agent.runtime.builder, tools.ssh\ntools.ssh.SSHPool\n" + REPORT
    assert _line(_run(code, [], tmp_path / "home"), "over ssh:") == (
        f"over ssh: {sorted(UNUSED_OVER_OPENSSH)!r}"
    )


def test_a_settings_problem_stops_the_hosts_already_asked(
    closed_inventory: Path, tmp_path: Path
) -> None:
    """With --inventory the hosts are asked before the settings load; bad settings still end
    recon with the settings' own line, and no host's answer is printed."""
    home = tmp_path / "home"
    home.mkdir()
    (home / "settings.yaml").write_text("mode: [unclosed\n")
    code = "import sys\nfrom agent.faces.cli import main\nsys.exit(main(sys.argv[1:]))\n"
    done = _run(code, ["recon", "--inventory", str(closed_inventory)], home)
    assert done.returncode == 2
    assert done.stderr.startswith(f"scout: {home / 'settings.yaml'} is not valid YAML")
    assert "unreachable" not in done.stderr + done.stdout


# What the process may not have loaded when it starts `ssh`: the first five each cost a fresh
# process more than OpenSSH's whole connect; importlib.abc (it loads importlib.resources and
# tempfile) and ctypes are milliseconds that only import hooks' base classes, asyncssh's
# library lookup and the wall's host side need; the other faces' modules are milliseconds that
# only their own commands need (cli.parser_for); logging (with traceback and textwrap) only a
# face's log file, secrets (with hmac and random) nothing os.urandom does not do, json only
# --json; dataclasses (with inspect, some 10 ms) nothing a NamedTuple does not do for the
# inventory's classes. None is needed to know where and how to connect.
UNUSED_BEFORE_ASKING = (
    "pydantic", "asyncio", "rich", "tools.world.facts", "agent.world.model",
    "importlib.abc", "importlib.resources", "ctypes", "agent.faces.mcp_face",
    "agent.evaluation.scenarios", "agent.faces.daytwo", "logging", "secrets", "json",
    "dataclasses", "inspect",
)  # fmt: skip
# Says on stderr which of them were loaded when this process first started `ssh`.
AT_SSH = (
    "import subprocess, sys\n"
    "start = subprocess.Popen.__init__\n"
    "def spawn(self, args, *rest, **named):\n"
    "    if str(args[0]).rpartition('/')[2] == 'ssh' and not hasattr(sys, 'asked'):\n"
    "        sys.asked = True\n"
    f"        heavy = sorted(set({UNUSED_BEFORE_ASKING!r}) & set(sys.modules))\n"
    "        print('at ssh:', heavy, file=sys.stderr)\n"
    "    return start(self, args, *rest, **named)\n"
    "subprocess.Popen.__init__ = spawn\n"
)


@pytest.mark.skipif(shutil.which("ssh") is None, reason="OpenSSH's client is not installed")
def test_recon_asks_the_host_before_loading_models_or_asyncio(
    closed_inventory: Path, tmp_path: Path
) -> None:
    done = _run(AT_SSH + RECON, ["recon", "--inventory", str(closed_inventory)], tmp_path / "h")
    assert _line(done, "at ssh:") == "at ssh: []"


@pytest.mark.skipif(shutil.which("ssh") is None, reason="OpenSSH's client is not installed")
def test_the_hook_sees_what_was_loaded_before_ssh(tmp_path: Path) -> None:
    """The check above can fail: loaded before `ssh` starts, recon's printing shows there."""
    code = AT_SSH + (
        "import asyncio, shutil, subprocess, agent.world.model, agent.world.tables\n"
        "import ctypes, importlib.abc, agent.faces.mcp_face, agent.evaluation.scenarios\n"
        "import agent.faces.daytwo\n"
        "subprocess.run([shutil.which('ssh'), '-V'], capture_output=True)\n"
    )
    done = _run(code, [], tmp_path / "home")
    assert _line(done, "at ssh:") == f"at ssh: {sorted(UNUSED_BEFORE_ASKING)!r}"
