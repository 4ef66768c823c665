"""Real OpenSSH sshd in network namespaces, built once per session and always torn down; and a
guard that the session left root's own Scout home as it found it."""

from __future__ import annotations

import contextlib
import os
import pwd
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.support.sshd_topology import Topology, build_topology, topology_unavailable_reason

# The test hosts here are real sshd on this machine, logged into as root: a host whose config
# forgot to point Scout's host state elsewhere (tests/support/sshd.py) writes the wall helper
# and job folders into root's real ~/.scout. Read from the password database, not $HOME, which
# tests change.
ROOT_SCOUT = Path(pwd.getpwuid(os.geteuid()).pw_dir) / ".scout"


def _listing(folder: Path) -> dict[str, int] | None:
    """Each entry of `folder` and of its subfolders (`jobs/NAME`, `wall-HASH/…`) with its
    mtime; None when `folder` does not exist. Two levels: a job folder written again under an
    old name changes its own mtime, not `jobs`'s."""
    try:
        top = list(os.scandir(folder))
    except FileNotFoundError:
        return None
    found = {}
    for entry in top:
        found[entry.name] = entry.stat(follow_symlinks=False).st_mtime_ns
        if entry.is_dir(follow_symlinks=False):
            with contextlib.suppress(FileNotFoundError):  # removed while we list
                for inner in os.scandir(entry.path):
                    mtime = inner.stat(follow_symlinks=False).st_mtime_ns
                    found[f"{entry.name}/{inner.name}"] = mtime
    return found


@pytest.fixture(scope="session", autouse=True)
def _root_scout_home_untouched() -> Iterator[None]:
    before = _listing(ROOT_SCOUT)
    yield
    after = _listing(ROOT_SCOUT)
    if after is None:
        return
    if before is None:
        pytest.fail(f"the tests created {ROOT_SCOUT} (root's own Scout home): {sorted(after)}")
    written = [
        f"{name} ({'new' if name not in before else 'changed'})"
        for name, mtime in sorted(after.items())
        if before.get(name) != mtime
    ]
    if written:
        pytest.fail(f"the tests wrote into {ROOT_SCOUT} (root's own Scout home): {written}")


@pytest.fixture(scope="session")
def sshd_topology(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Topology]:
    reason = topology_unavailable_reason()
    if reason is not None:
        pytest.skip(f"real-sshd system tests skipped: {reason}")
    topology = build_topology(tmp_path_factory.mktemp("sshd-topology"))
    try:
        yield topology
    finally:
        topology.teardown()
