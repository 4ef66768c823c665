"""The private dockerd's sshd (tests/support/dockerd.py) starts even when the port it probed is
taken before sshd binds it, and accepts connections once the start returns."""

from __future__ import annotations

import socket
from pathlib import Path

import pytest

from tests.support import dockerd
from tests.support.dockerd import DockerHost, dockerd_unavailable_reason

pytestmark = pytest.mark.skipif(
    dockerd_unavailable_reason() is not None, reason=dockerd_unavailable_reason() or ""
)


def test_sshd_moves_to_another_port_when_the_probed_one_is_taken(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    with socket.socket() as squatter:  # takes the probed port between the probe and sshd's bind
        squatter.bind(("127.0.0.1", 0))
        squatter.listen()
        taken = squatter.getsockname()[1]
        probes = iter([taken, dockerd._free_port()])
        monkeypatch.setattr(dockerd, "_free_port", lambda: next(probes))
        host = DockerHost(tmp_path)
        try:
            dockerd._start_sshd(host)
            with socket.create_connection(("127.0.0.1", host.port), timeout=60) as ssh:
                greeting = ssh.recv(64)
        finally:
            host.teardown()

    assert host.port != taken
    assert greeting.startswith(b"SSH-2.0-OpenSSH")
