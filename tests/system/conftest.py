"""Real OpenSSH sshd in network namespaces, built once per session and always torn down."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.support.sshd_topology import Topology, build_topology, topology_unavailable_reason


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
