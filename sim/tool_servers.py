"""Starting and stopping the tool server of each simulated host (see sim/fakehost/server.py).

The simulator creates the listening socket itself and hands it to the server process, so the
socket accepts connections from the moment `start` returns; requests wait in its backlog while
the server finishes importing the tools.
"""

from __future__ import annotations

import contextlib
import os
import socket
import subprocess
import sys
from pathlib import Path

from sim.fakehost.state import HOST_DIR_ENV
from sim.fakehost.wire import SOCKET_DIR, SOCKET_NAME

FAKEHOST_PARENT = Path(__file__).parent
BACKLOG = 256
STOP_WAIT_S = 5.0
# Room in the server's argv for the command lines its children take on (see server._Title).
TITLE_ROOM = 4096
_BOOT = (
    "import sys; sys.path.insert(0, sys.argv[1]); "
    "from fakehost.server import serve; serve(sys.argv[2:])"
)


class ToolServerProcess:
    """The tool server of one host folder; `start()` then `stop()`, or `with` it."""

    def __init__(self, host_dir: Path) -> None:
        self.host_dir = host_dir
        self._proc: subprocess.Popen[bytes] | None = None

    @property
    def socket_path(self) -> Path:
        return self.host_dir / SOCKET_DIR / SOCKET_NAME

    @property
    def pid(self) -> int | None:
        return self._proc.pid if self._proc else None

    def __enter__(self) -> ToolServerProcess:
        self.start()
        return self

    def __exit__(self, *_exc: object) -> None:
        self.stop()

    def start(self) -> None:
        run_dir = self.host_dir / SOCKET_DIR
        run_dir.mkdir(mode=0o700, exist_ok=True)
        self.socket_path.unlink(missing_ok=True)
        listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        dir_fd = os.open(run_dir, os.O_RDONLY | os.O_DIRECTORY)
        try:
            listener.bind(f"/proc/self/fd/{dir_fd}/{SOCKET_NAME}")  # short whatever run_dir is
            listener.listen(BACKLOG)
        finally:
            os.close(dir_fd)
        argv = [
            sys.executable, "-IS", "-c", _BOOT, str(FAKEHOST_PARENT), str(self.host_dir),
            str(listener.fileno()), str(os.getpid()), " " * TITLE_ROOM,
        ]  # fmt: skip
        with listener, open(run_dir / "server.log", "ab") as log:
            self._proc = subprocess.Popen(
                argv,
                pass_fds=[listener.fileno()],
                env={HOST_DIR_ENV: str(self.host_dir), "LANG": "C.UTF-8", "PATH": "/usr/bin:/bin"},
                cwd=self.host_dir / "home",
                stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL,
                stderr=log,
                start_new_session=True,
            )

    def stop(self) -> None:
        """End the server (it kills the tools still running) and remove its socket."""
        self.socket_path.unlink(missing_ok=True)
        if self._proc is None:
            return
        self._proc.terminate()
        try:
            self._proc.wait(STOP_WAIT_S)
        except subprocess.TimeoutExpired:
            with contextlib.suppress(ProcessLookupError):
                self._proc.kill()
            self._proc.wait()
        self._proc = None
