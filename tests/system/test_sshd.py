"""The sshd_config every real-sshd test host writes (tests/support/sshd.py): its sessions'
environment, as sshd itself reads it back (`sshd -T`), keeps Scout's host state in the test's
folder and the caller's variables beside it."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.support.sshd import SSHD, new_key, run, write_sshd_config

pytestmark = pytest.mark.skipif(not SSHD.exists(), reason="needs OpenSSH's sshd")


def _write(folder: Path, env: dict[str, str] | None = None, extra: tuple[str, ...] = ()) -> Path:
    new_key(folder / "host_ed25519")
    return write_sshd_config(
        folder / "sshd_config",
        listen="127.0.0.1",
        port=22,
        host_key=folder / "host_ed25519",
        pid_file=folder / "sshd.pid",
        authorized_keys=folder / "authorized_keys",
        host_state=folder / "state",
        env=env,
        extra=extra,
    )


def _session_env(config: Path) -> list[str]:
    """The variables sshd will set in its sessions, from its own dump of the config."""
    dump = run([str(SSHD), "-T", "-f", str(config)]).stdout.splitlines()
    return [line.split(" ", 1)[1] for line in dump if line.startswith("setenv ")]


def test_sessions_keep_host_state_in_the_test_folder_beside_the_callers_variables(
    tmp_path: Path,
) -> None:
    config = _write(tmp_path, env={"DOCKER_HOST": "unix:///tmp/d.sock"}, extra=("MaxSessions 3",))

    assert _session_env(config) == [
        "SHLVL=1",
        "DOCKER_HOST=unix:///tmp/d.sock",
        f"SCOUT_WALL_DIR={tmp_path / 'state' / 'wall'}",
        f"SCOUT_JOBS_DIR={tmp_path / 'state' / 'jobs'}",
    ]


@pytest.mark.parametrize("line", ["SetEnv FOO=1", "  setenv=FOO=1", "SETENV\tFOO=1"])
def test_a_second_setenv_line_is_refused_as_sshd_would_ignore_it(tmp_path: Path, line: str) -> None:
    with pytest.raises(ValueError, match="not as a SetEnv line"):
        _write(tmp_path, extra=(line,))
    assert not (tmp_path / "sshd_config").exists()


def test_the_caller_cannot_point_host_state_elsewhere(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="SCOUT_JOBS_DIR is set from host_state"):
        _write(tmp_path, env={"SCOUT_JOBS_DIR": "/root/.scout/jobs"})


def test_a_value_sshd_would_split_is_refused(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="unquoted"):
        _write(tmp_path, env={"GREETING": "two words"})
