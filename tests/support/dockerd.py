"""A private Docker engine reached through a real sshd on loopback, for docker_ctl system tests.

`dockerd` runs with its own data/exec roots and socket under a short temp folder and never touches
the machine's network (no bridge, no iptables, no ip_forward). A busybox image is imported from
`/usr/bin/busybox` as `local/busybox:1`. One OpenSSH `sshd` on 127.0.0.1 (a free port) points its
sessions at the private socket with `SetEnv DOCKER_HOST=…`, so Scout reaches Docker exactly as on a
real host. An optional unprivileged user (made with `useradd`, removed on teardown) logs in to the
same sshd to meet the socket's permission check. `teardown()` undoes every step, newest first.
"""

from __future__ import annotations

import contextlib
import os
import pwd
import shutil
import signal
import socket
import subprocess
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from tests.support.sshd import (
    SSHD,
    START_WAIT_S,
    SshdDidNotStart,
    new_key,
    run,
    wait_until_listening,
    write_sshd_config,
)

DOCKERD = Path("/usr/sbin/dockerd")
BUSYBOX = Path("/usr/bin/busybox")
IMAGE = "local/busybox:1"
PORT_TRIES = 5
NO_REGISTRY = "http://127.0.0.1:9"


def dockerd_unavailable_reason() -> str | None:
    """Why a private dockerd behind sshd cannot be run here, or None when it can."""
    if os.geteuid() != 0:
        return "needs root (dockerd, sshd, useradd)"
    for path in (DOCKERD, SSHD, BUSYBOX):
        if not path.exists():
            return f"{path} is missing (apt-get install docker.io openssh-server busybox-static)"
    missing = [t for t in ("docker", "ssh-keygen", "useradd", "userdel") if not shutil.which(t)]
    if missing:
        return f"missing tools: {', '.join(missing)}"
    for user in ("root", "sshd"):
        try:
            pwd.getpwnam(user)
        except KeyError:
            return f"/etc/passwd has no {user!r} user (sshd needs it); the user database is damaged"
    return None


@dataclass
class DockerHost:
    """Everything a test needs: where the engine listens and how to log in to its sshd."""

    root: Path
    port: int = 0
    host_key_pub: str = ""
    unprivileged_user: str | None = None
    _undo: list[Callable[[], None]] = field(default_factory=list)

    @property
    def socket(self) -> Path:
        return self.root / "docker.sock"

    @property
    def client_key(self) -> Path:
        return self.root / "id_ed25519"

    @property
    def known_hosts(self) -> Path:
        return self.root / "known_hosts"

    def inventory_data(self, *, user: str = "root") -> dict[str, object]:
        return {
            "known_hosts": str(self.known_hosts),
            "defaults": {"user": user, "identity_file": str(self.client_key)},
            "hosts": {"dock": {"address": "127.0.0.1", "port": self.port}},
        }

    def docker(self, *args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
        """Run the docker CLI locally against the private engine (for setup and cross-checks)."""
        return run(["docker", "-H", f"unix://{self.socket}", *args], check=check)

    def teardown(self) -> None:
        """Undo every step that was done, newest first; never raises."""
        while self._undo:
            with contextlib.suppress(Exception):
                self._undo.pop()()


def start_docker_host() -> DockerHost:
    """Start dockerd, import the image, add the unprivileged user and start sshd; undo on failure.

    The folder is made directly under /tmp (unix socket paths must stay under 108 characters) and
    is world-traversable so the unprivileged user can read its authorized_keys.
    """
    root = Path(tempfile.mkdtemp(prefix="sdk", dir="/tmp"))
    root.chmod(0o755)
    host = DockerHost(root)
    host._undo.append(lambda: shutil.rmtree(root, ignore_errors=True))
    try:
        _start_dockerd(host)
        _import_busybox(host)
        _add_unprivileged_user(host)
        _start_sshd(host)
    except Exception:
        host.teardown()
        raise
    return host


def _start_dockerd(host: DockerHost) -> None:
    root = host.root
    log = (root / "dockerd.log").open("w")
    args = [
        str(DOCKERD), "--data-root", str(root / "data"), "--exec-root", str(root / "exec"),
        "--pidfile", str(root / "pid"), "-H", f"unix://{host.socket}", "--group", "root",
        "--bridge=none", "--iptables=false", "--ip6tables=false", "--ip-forward=false",
        "--ip-masq=false", "--storage-driver=vfs", "--exec-opt", "native.cgroupdriver=cgroupfs",
    ]  # fmt: skip
    # SAFETY: any registry access goes to a closed port on loopback, never out of the machine.
    env = {**os.environ, "HTTP_PROXY": NO_REGISTRY, "HTTPS_PROXY": NO_REGISTRY, "NO_PROXY": ""}
    proc = subprocess.Popen(args, stdout=log, stderr=log, env=env, start_new_session=True)
    log.close()
    host._undo.append(lambda: _unmount_leftovers(root))
    host._undo.append(lambda: _stop_dockerd(proc, root / "pid"))
    deadline = time.monotonic() + START_WAIT_S
    while host.docker("version", check=False).returncode != 0:
        if proc.poll() is not None or time.monotonic() > deadline:
            raise RuntimeError(f"dockerd did not start; see {root / 'dockerd.log'}")
        time.sleep(0.1)
    host.socket.chmod(0o660)  # root:root 660: only root may talk to the engine


def _stop_dockerd(proc: subprocess.Popen[bytes], pid_file: Path) -> None:
    """Stop dockerd by its pid file (falling back to the process we started), and wait for it."""
    pid = proc.pid
    with contextlib.suppress(OSError, ValueError):
        pid = int(pid_file.read_text().strip())
    with contextlib.suppress(OSError):
        os.kill(pid, signal.SIGTERM)
    try:
        proc.wait(timeout=20)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait(timeout=10)


def _unmount_leftovers(root: Path) -> None:
    mounts = Path("/proc/self/mounts").read_text().split("\n")
    points = [line.split()[1] for line in mounts if line and line.split()[1].startswith(str(root))]
    for point in sorted(points, reverse=True):
        run(["umount", "-l", point], check=False)


def _import_busybox(host: DockerHost) -> None:
    rootfs = host.root / "rootfs"
    (rootfs / "bin").mkdir(parents=True)
    shutil.copy(BUSYBOX, rootfs / "bin" / "busybox")
    run([str(rootfs / "bin" / "busybox"), "--install", "-s", str(rootfs / "bin")])
    # the applet links point at the absolute path inside the image: /bin/busybox
    for link in (rootfs / "bin").iterdir():
        if link.is_symlink():
            link.unlink()
            link.symlink_to("/bin/busybox")
    tarball = host.root / "rootfs.tar"
    run(["tar", "-C", str(rootfs), "-cf", str(tarball), "."])
    host.docker("import", str(tarball), IMAGE)
    shutil.rmtree(rootfs)
    tarball.unlink()


def _add_unprivileged_user(host: DockerHost) -> None:
    name = f"sdk{os.getpid() % 100000}"
    run(["userdel", name], check=False)  # leftover of a crashed run
    run(["useradd", "-M", "-d", str(host.root), "-s", "/bin/sh", "-p", "*", name])
    host._undo.append(lambda: run(["userdel", name], check=False))
    host.unprivileged_user = name


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def _start_sshd(host: DockerHost) -> None:
    """sshd on a free loopback port. The port is probed, then sshd binds it: another process
    may take it in between, so a start that finds it in use tries another port."""
    root = host.root
    new_key(host.client_key)
    key = root / "host_ed25519"
    host.host_key_pub = new_key(key)
    authorized = root / "authorized_keys"
    shutil.copy(host.client_key.with_suffix(".pub"), authorized)
    authorized.chmod(0o644)
    Path("/run/sshd").mkdir(parents=True, exist_ok=True)
    for _ in range(PORT_TRIES):
        host.port = _free_port()
        try:
            _start_sshd_on(host, key, authorized)
            break
        except SshdDidNotStart as exc:
            if "Address already in use" not in str(exc):
                raise
    else:
        raise SshdDidNotStart(
            f"every one of {PORT_TRIES} free ports was taken before sshd bound it"
        )
    host.known_hosts.write_text(f"[127.0.0.1]:{host.port} {host.host_key_pub}\n")


def _start_sshd_on(host: DockerHost, key: Path, authorized: Path) -> None:
    """`sshd -D` (kept as our child, so its exit is seen at once) on host.port; returns once it
    listens."""
    root = host.root
    pid_file, log = root / "sshd.pid", root / "sshd.log"
    log.unlink(missing_ok=True)  # sshd appends; a retry reads its own start only
    config = write_sshd_config(
        root / "sshd_config",
        listen="127.0.0.1",
        port=host.port,
        host_key=key,
        pid_file=pid_file,
        authorized_keys=authorized,
        host_state=root,
        env={"DOCKER_HOST": f"unix://{host.socket}"},
        extra=["MaxSessions 64"],
    )
    sshd = subprocess.Popen(
        [str(SSHD), "-D", "-f", str(config), "-E", str(log)],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
        # a host's sshd runs with init's 022, whatever this test process's umask is (Scout's
        # main() sets 077 in it): what one user's session installs, another may read
        umask=0o022,
    )
    host._undo.append(lambda: _stop_sshd(sshd))
    wait_until_listening(pid_file, log, sshd)


def _stop_sshd(sshd: subprocess.Popen[bytes]) -> None:
    sshd.terminate()
    sshd.wait(timeout=START_WAIT_S)
