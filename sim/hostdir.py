"""Lay out one simulated host on disk: its state file, home folder, sandbox and bin folder.

HOST_DIR/state.json      the host's state (fakehost.state reads and changes it)
HOST_DIR/home/           HOME and working folder of every command (with the HF cache folders)
HOST_DIR/sandbox/launch  runs a command line in restricted bash, and `sh -c` scripts in bash
                         when the tool server launched it inside the host's wall
                         (sim/fakehost/confinement.py; exec-allow lists what it may run)
HOST_DIR/bin/            the only PATH: fake tools (clients of the host's tool server), wrapped
                         and read-only text tools
HOST_DIR/bin-script/     added to PATH for walled-in scripts only: tools that write or signal
HOST_DIR/tmp/            TMPDIR of scripts (with home/, all a command may write)
HOST_DIR/run/            the tool server's socket and log, once sim/tool_servers.py started it
"""

from __future__ import annotations

import os
import shutil
import sys
import time
from pathlib import Path
from typing import Any

from sim.client_build import client_binary, install_client
from sim.exec_allow import write_allow_file
from sim.fakehost.confinement import NO_LANDLOCK_FILE
from sim.fakehost.hfcache import lay_out
from sim.fakehost.main import TOOLS
from sim.fakehost.state import HOST_DIR_ENV, write_state
from sim.fakehost.views import VIEW_DIR, VIRTUAL_PATHS
from sim.scenario import Host

SANDBOX_SRC = Path(__file__).parent / "sandbox"
FAKEHOST_PARENT = Path(__file__).parent
BASH = shutil.which("bash") or "/bin/bash"

# Real tools that read no files and only write to stdout: linked as they are.
PLAIN_TOOLS = (
    "tr", "seq", "sleep", "true", "false", "echo", "printf", "test", "basename", "dirname", "expr",
)  # fmt: skip
# Real tools that read files and only write to stdout: system file paths are mapped to the host's.
READING_TOOLS = (
    "grep", "head", "tail", "wc", "cut", "tac", "nl", "paste", "fold", "comm", "join", "base64",
    "md5sum", "sha256sum",
)  # fmt: skip
# Real tools behind a guard that refuses their writing or exec options (see sim/sandbox/); awk
# runs only inside the host's wall.
WRAPPED_TOOLS = ("sed", "sort", "uniq", "date", "timeout", "sudo", "awk", "python3")
# Fake tools that a wrapper of the same name in bin/ fronts (sandbox/tools/NAME): python3 also
# runs Scout's wall helper inside the host's wall (sandbox/python3).
FRONTED_FAKE_TOOLS = frozenset({"python3"})
SHELL_NAMES = ("sh", "bash")
SANDBOX_FILES = ("launch", "rc.bash", "shell")
# Only in walled-in scripts (bin-script/): real tools that write files or run commands (awk's
# system(); the wall keeps them inside the host's home and its programs), guarded ones, and
# fake tools that signal this host's processes.
SCRIPT_REAL_TOOLS = ("mkdir", "mv", "awk")
SCRIPT_WRAPPED_TOOLS = ("setsid",)
SCRIPT_FAKE_TOOLS = frozenset({"kill"})
# Fabric benchmarks a fresh Spark lacks (sim/scenario.py FabricTests): nccl-tests in its build
# folder under HOME, perftest on PATH.
NCCL_TESTS = ("all_gather_perf", "all_reduce_perf")
NCCL_TESTS_BUILD = "nccl-tests/build"
PERFTEST = ("ib_write_bw", "ib_read_bw")

# A fake tool: a client of the host's tool server, compiled (sim/fakehost/client.c) or, without a
# C compiler, this Python one (sim/fakehost/client.py).
_TOOL_STUB = """#!{python} -IS
import sys
sys.path.insert(0, {parent!r})
from fakehost.client import forward
sys.exit(forward({tool!r}, {host_dir!r}))
"""


def host_state(host: Host, user: str, now: float) -> dict[str, Any]:
    """The JSON state of a host at start: the scenario plus absolute times for containers."""
    state = host.model_dump(mode="json")
    state["user"] = user
    state["sim_pid"] = os.getpid()  # detached engine processes end when the simulator is gone
    for container in state["docker"]["containers"].values():
        started = now - container["up_for_s"]
        container.update(
            created_at=started, started_at=started, finished_at=0.0, auto_remove=False, env=[]
        )
    return state


def materialize(host: Host, user: str, host_dir: Path) -> Path:
    """Create (or recreate) the folder of one host and return it."""
    if host_dir.exists():
        shutil.rmtree(host_dir)
    for sub in ("home", "bin", "bin-script", "sandbox", "sandbox/tools", "tmp"):
        (host_dir / sub).mkdir(parents=True)
    if not host.landlock:
        (host_dir / NO_LANDLOCK_FILE).write_text("this host's kernel has no Landlock\n")
    write_state(host_dir, host_state(host, user, time.time()))
    lay_out(host.hf_cache, host_dir / "home")
    _install_sandbox(host_dir, user)
    _install_bin(host, host_dir, user)
    return host_dir


def _map_paths_snippet() -> str:
    """POSIX sh that rewrites "$@" so the host's system files come from HOST_DIR/files."""
    cases = "|".join(VIRTUAL_PATHS)
    return (
        "for arg do\n"
        "    shift\n"
        f'    case "$arg" in {cases}) arg="@HOST_DIR@/{VIEW_DIR}$arg" ;; esac\n'
        '    set -- "$@" "$arg"\n'
        "done"
    )


def _fill(template: str, host_dir: Path, user: str) -> str:
    return (
        template.replace("@MAP_PATHS@", _map_paths_snippet())
        .replace("@HOST_DIR@", str(host_dir))
        .replace("@USER@", user)
        .replace("@BASH@", BASH)
        .replace("@PYTHON@", sys.executable)
    )


def _write_exec(path: Path, text: str) -> None:
    path.write_text(text)
    path.chmod(0o755)


def _install_sandbox(host_dir: Path, user: str) -> None:
    for name in SANDBOX_FILES:
        text = _fill((SANDBOX_SRC / name).read_text(), host_dir, user)
        _write_exec(host_dir / "sandbox" / name, text)
    wrapped = (name for name in WRAPPED_TOOLS if name not in FRONTED_FAKE_TOOLS)
    real = (*PLAIN_TOOLS, *READING_TOOLS, *wrapped, *SCRIPT_REAL_TOOLS, *SCRIPT_WRAPPED_TOOLS)
    write_allow_file(host_dir / "sandbox" / "exec-allow", real)


def _installed(host: Host, tool: str) -> bool:
    """Whether a fake tool is on this host's PATH: nvcc and perftest only where the scenario
    says so; nccl-tests never (its build folder holds it, see _install_nccl_tests)."""
    if tool in NCCL_TESTS:
        return False
    if tool in PERFTEST:
        return host.fabric_tests.perftest
    return tool != "nvcc" or host.nvcc_on_path


def _install_tool(tool: str, target: Path, host_dir: Path, client: Path | None) -> None:
    if client is not None:
        install_client(client, target)
        return
    stub = _TOOL_STUB.format(
        python=sys.executable, parent=str(FAKEHOST_PARENT), tool=tool, host_dir=str(host_dir)
    )
    _write_exec(target, stub)


def _install_nccl_tests(host: Host, host_dir: Path, client: Path | None) -> None:
    """~/nccl-tests/build/*_perf where NVIDIA's NCCL playbook built them (`make MPI=1`)."""
    if not host.fabric_tests.nccl_tests:
        return
    build = host_dir / "home" / NCCL_TESTS_BUILD
    build.mkdir(parents=True)
    for tool in NCCL_TESTS:
        _install_tool(tool, build / tool, host_dir, client)


def _install_bin(host: Host, host_dir: Path, user: str) -> None:
    bin_dir, script_dir = host_dir / "bin", host_dir / "bin-script"
    client = client_binary()
    for tool in TOOLS:
        if _installed(host, tool):
            target = (script_dir if tool in SCRIPT_FAKE_TOOLS else bin_dir) / tool
            if tool in FRONTED_FAKE_TOOLS:
                target = host_dir / "sandbox" / "tools" / tool
            _install_tool(tool, target, host_dir, client)
    _install_nccl_tests(host, host_dir, client)
    for folder, names in ((bin_dir, WRAPPED_TOOLS), (script_dir, SCRIPT_WRAPPED_TOOLS)):
        for name in names:
            _write_exec(folder / name, _fill((SANDBOX_SRC / name).read_text(), host_dir, user))
    for name in SCRIPT_REAL_TOOLS:
        real = shutil.which(name, path="/usr/bin:/bin")
        if real:
            os.symlink(real, script_dir / name)
    for name in SHELL_NAMES:
        _write_exec(bin_dir / name, _fill((SANDBOX_SRC / "shell").read_text(), host_dir, ""))
    for name in PLAIN_TOOLS:
        real = shutil.which(name, path="/usr/bin:/bin")
        if real:
            os.symlink(real, bin_dir / name)
    reader = (SANDBOX_SRC / "readtool").read_text()
    for name in READING_TOOLS:
        real = shutil.which(name, path="/usr/bin:/bin")
        if real:
            _write_exec(bin_dir / name, _fill(reader.replace("@REAL@", real), host_dir, ""))


def sandbox_env(host_dir: Path) -> dict[str, str]:
    """Environment for starting `sandbox/launch` itself (it builds the command's own env)."""
    return {"PATH": "/usr/bin:/bin", HOST_DIR_ENV: str(host_dir)}
