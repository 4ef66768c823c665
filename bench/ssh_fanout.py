"""Fan-out over SSH: Scout's pooled ssh_exec against parallel-ssh and Ansible on the same sshd.

Starts N OpenSSH sshd on 127.0.0.1 (unique ports, own temp dir), runs the recon-like command on
all of them from a cold start (a new pool/client/process per repetition), prints medians of 5, a
warm-connection latency (median of 50 over one open connection), and, last, the ratios:
`fanout scout/parallel-ssh: X.XX scout/ansible: Y.YY` (below 1 means Scout is faster).

    .venv/bin/python bench/ssh_fanout.py [--hosts 16] [--reps 5]
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import getpass
import importlib.util
import os
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from agent.faces.library_warnings import route_library_warnings

# A library's warnings (asyncssh's, as it imports cryptography) stay off the bench's output, as
# they stay off the screen in Scout's faces: the benches that import this print only their own.
route_library_warnings()

from agent.safety.shell.judge import judge_shell  # noqa: E402
from tools.base import ToolContext  # noqa: E402
from tools.ssh import Inventory, SSHPool  # noqa: E402
from tools.ssh_exec import SSHExec, SSHExecInput  # noqa: E402

COMMAND = "cat /proc/meminfo; nproc; uname -a"
SSHD = "/usr/sbin/sshd"


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


class SshdFarm:
    """N sshd processes on loopback; stopped by the PIDs in their pid files."""

    def __init__(self, root: Path, count: int, sshd: str = SSHD) -> None:
        self.root = root
        self.sshd = sshd
        self.key = root / "id_ed25519"
        self.known_hosts = root / "known_hosts"
        self.ports: list[int] = []
        self.pid_files: list[Path] = []
        subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", self.key], check=True)
        Path("/run/sshd").mkdir(parents=True, exist_ok=True)
        lines = []
        for index in range(count):
            port, host_pub = self._start(index)
            self.ports.append(port)
            lines.append(f"[127.0.0.1]:{port} {host_pub}\n")
        self.known_hosts.write_text("".join(lines))
        self._wait_ready()

    def _start(self, index: int) -> tuple[int, str]:
        folder = self.root / f"h{index}"
        folder.mkdir()
        host_key = folder / "host_ed25519"
        subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", host_key], check=True)
        port = free_port()
        pid_file = folder / "sshd.pid"
        config = folder / "sshd_config"
        config.write_text(
            f"ListenAddress 127.0.0.1\nPort {port}\nHostKey {host_key}\nPidFile {pid_file}\n"
            f"AuthorizedKeysFile {self.key}.pub\nPubkeyAuthentication yes\n"
            "PasswordAuthentication no\nKbdInteractiveAuthentication no\nUsePAM no\n"
            f"StrictModes no\nSetEnv SHLVL=1 SCOUT_JOBS_DIR={folder / 'jobs'} "
            f"SCOUT_WALL_DIR={folder / 'wall'}\n"
            "MaxStartups 100:30:200\n"
        )
        subprocess.run([self.sshd, "-f", config, "-E", folder / "sshd.log"], check=True)
        self.pid_files.append(pid_file)
        return port, " ".join(host_key.with_suffix(".pub").read_text().split()[:2])

    def _wait_ready(self) -> None:
        deadline = time.monotonic() + 10
        while not all(p.exists() for p in self.pid_files):
            if time.monotonic() > deadline:
                raise RuntimeError(f"sshd did not start; see the logs under {self.root}")
            time.sleep(0.02)

    def stop(self) -> None:
        for pid_file in self.pid_files:
            with contextlib.suppress(OSError, ValueError):
                os.kill(int(pid_file.read_text().strip()), signal.SIGTERM)

    def inventory(self) -> Inventory:
        user = getpass.getuser()
        return Inventory.from_dict(
            {
                "known_hosts": str(self.known_hosts),
                "defaults": {"user": user, "identity_file": str(self.key)},
                "hosts": {
                    f"h{i}": {"address": "127.0.0.1", "port": port}
                    for i, port in enumerate(self.ports)
                },
            }
        )


def median_of(reps: int, run: Callable[[], None]) -> float:
    times = []
    for _ in range(reps):
        started = time.perf_counter()
        run()
        times.append(time.perf_counter() - started)
    return statistics.median(times)


def scout_cold(farm: SshdFarm, spill: Path) -> None:
    async def fan_out() -> None:
        inventory = farm.inventory()
        async with SSHPool(inventory) as pool:
            params = SSHExecInput(hosts=inventory.names(), command=COMMAND)
            result = await SSHExec(pool, judge_shell).run(params, ToolContext(spill_dir=spill))
        if result.is_error:
            raise RuntimeError(result.text[:2000])

    asyncio.run(fan_out())


def scout_warm_latency(farm: SshdFarm, count: int = 50) -> float:
    async def measure() -> float:
        async with SSHPool(farm.inventory()) as pool:
            await pool.run("h0", "true")
            times = []
            for _ in range(count):
                started = time.perf_counter()
                await pool.run("h0", "true")
                times.append(time.perf_counter() - started)
        return statistics.median(times)

    return asyncio.run(measure())


def parallel_ssh_cold(farm: SshdFarm) -> None:
    from pssh.clients import ParallelSSHClient
    from pssh.config import HostConfig

    client = ParallelSSHClient(
        ["127.0.0.1"] * len(farm.ports),
        user=getpass.getuser(),
        pkey=str(farm.key),
        allow_agent=False,
        host_config=[HostConfig(port=port) for port in farm.ports],
        pool_size=len(farm.ports),
    )
    output = client.run_command(COMMAND, stop_on_errors=True)
    client.join(output)
    for host_output in output:
        if not list(host_output.stdout) or host_output.exit_code != 0:
            raise RuntimeError(f"parallel-ssh failed on port {host_output.client.port}")


def ansible_cold(farm: SshdFarm, state: Path) -> None:
    inventory = state / "hosts.ini"
    if not inventory.exists():
        inventory.write_text(
            "".join(
                f"h{i} ansible_host=127.0.0.1 ansible_port={port}\n"
                for i, port in enumerate(farm.ports)
            )
        )
    env = {
        **os.environ,
        "ANSIBLE_HOME": str(state / "home"),
        "ANSIBLE_LOCAL_TEMP": str(state / "tmp"),
        "ANSIBLE_SSH_CONTROL_PATH_DIR": str(state / "cp"),
        "ANSIBLE_HOST_KEY_CHECKING": "True",
        "ANSIBLE_SSH_ARGS": f"-o ControlMaster=no -o UserKnownHostsFile={farm.known_hosts}",
        "ANSIBLE_PRIVATE_KEY_FILE": str(farm.key),
        "ANSIBLE_REMOTE_USER": getpass.getuser(),
        "ANSIBLE_NOCOLOR": "1",
    }
    ansible = shutil.which("ansible", path=str(Path(sys.executable).parent)) or "ansible"
    args = [ansible, "all", "-i", str(inventory), "-m", "raw", "-a", COMMAND]
    args += ["-f", str(len(farm.ports))]
    done = subprocess.run(args, env=env, capture_output=True, text=True, timeout=300)
    if done.returncode != 0:
        raise RuntimeError(f"ansible failed: {done.stdout[-1500:]}{done.stderr[-1500:]}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--hosts", type=int, default=16)
    parser.add_argument("--reps", type=int, default=5)
    args = parser.parse_args()
    if os.geteuid() != 0 or not Path(SSHD).exists():
        sys.exit("bench/ssh_fanout.py needs root and /usr/sbin/sshd (openssh-server).")

    with tempfile.TemporaryDirectory(prefix="scout-fanout-") as tmp:
        root = Path(tmp)
        farm = SshdFarm(root, args.hosts)
        try:
            print(f"{args.hosts} sshd on 127.0.0.1; command: {COMMAND!r}; medians of {args.reps}")
            scout = median_of(args.reps, lambda: scout_cold(farm, root / "spill"))
            print(f"scout (SSHPool + ssh_exec, cold pool): {scout:.3f} s")
            warm = scout_warm_latency(farm)
            print(f"scout warm command latency (median of 50): {warm * 1000:.2f} ms")

            pssh_time = None
            if importlib.util.find_spec("pssh") is None:
                print("parallel-ssh: skipped (not installed: pip install parallel-ssh)")
            else:
                pssh_time = median_of(args.reps, lambda: parallel_ssh_cold(farm))
                print(f"parallel-ssh (ParallelSSHClient, new client): {pssh_time:.3f} s")

            ansible_time = None
            if shutil.which("ansible", path=str(Path(sys.executable).parent)) is None:
                print("ansible: skipped (not installed: pip install ansible-core)")
            else:
                state = root / "ansible"
                state.mkdir()
                ansible_time = median_of(args.reps, lambda: ansible_cold(farm, state))
                print(f"ansible (-m raw -f {args.hosts}, no ControlPersist): {ansible_time:.3f} s")
        finally:
            farm.stop()

    def ratio(peer: float | None) -> str:
        return f"{scout / peer:.2f}" if peer else "n/a"

    print(f"fanout scout/parallel-ssh: {ratio(pssh_time)} scout/ansible: {ratio(ansible_time)}")


if __name__ == "__main__":
    main()
