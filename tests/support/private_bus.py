"""A private D-Bus daemon on a pathname socket, for the wall's D-Bus proxy tests.

`dbus-daemon --session` (a desktop session's configuration: anyone of the same uid may call
anything) stands in for a host's system bus: the wall's proxy is what refuses changes, so the
bus itself must not. Its address is what the helper's DBUS_SYSTEM_BUS_ADDRESS names.
"""

from __future__ import annotations

import contextlib
import shutil
import subprocess
import tempfile
from collections.abc import Iterator
from pathlib import Path

CLIENTS = ("dbus-daemon", "busctl", "gdbus", "dbus-send")


def missing_client() -> str | None:
    """The first D-Bus program these tests need that is not installed, or None."""
    return next((name for name in CLIENTS if shutil.which(name) is None), None)


@contextlib.contextmanager
def private_bus() -> Iterator[str]:
    """Start the daemon under a short /tmp folder (socket paths stay under 108 bytes); yield
    its `unix:path=` address; kill it at the end."""
    folder = Path(tempfile.mkdtemp(prefix="sdbus", dir="/tmp"))
    folder.chmod(0o755)
    address = f"unix:path={folder / 'bus'}"
    daemon = subprocess.Popen(
        ["dbus-daemon", "--session", "--nofork", f"--address={address}", "--print-address"],
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert daemon.stdout is not None and daemon.stdout.readline().startswith("unix:")
        yield address
    finally:
        daemon.kill()
        daemon.wait(timeout=30)
        shutil.rmtree(folder, ignore_errors=True)
