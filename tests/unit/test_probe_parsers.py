"""The two parsers the probe added: `docker stats` memory and `ss -tlnp` listeners.

No shared capture exists for either; the text below follows the tools' documented layouts.
"""

from __future__ import annotations

import pytest

from tools.recon.parsers import (
    ParseError,
    parse_docker_stats_json,
    parse_docker_version,
    parse_ss_listening,
)

STATS = (
    '{"BlockIO":"0B / 0B","CPUPerc":"0.52%","Container":"9c4f1e2b7a31","ID":"9c4f1e2b7a31",'
    '"MemPerc":"75.01%","MemUsage":"91.27GiB / 121.7GiB","Name":"vllm_node","NetIO":"0B / 0B",'
    '"PIDs":"212"}\n'
)
SS = """State  Recv-Q Send-Q Local Address:Port  Peer Address:PortProcess
LISTEN 0      4096         127.0.0.1:11000      0.0.0.0:*
LISTEN 0      2048           0.0.0.0:8000       0.0.0.0:*    users:(("python3",pid=52311,fd=25))
LISTEN 0      4096              [::]:22            [::]:*
"""


def test_docker_stats_memory_in_bytes() -> None:
    (row,) = parse_docker_stats_json(STATS)
    assert row.name == "vllm_node"
    assert row.memory_used_bytes == round(91.27 * 1024**3)
    assert row.memory_limit_bytes == round(121.7 * 1024**3)
    assert row.memory_percent == 75.01


def test_docker_stats_rejects_an_error_message() -> None:
    with pytest.raises(ParseError, match="docker stats"):
        parse_docker_stats_json("docker: 'stats' is not a docker command.")


def test_ss_listening_ports_with_and_without_process() -> None:
    sockets = parse_ss_listening(SS)
    assert [(s.address, s.port) for s in sockets] == [
        ("127.0.0.1", 11000),
        ("0.0.0.0", 8000),
        ("::", 22),
    ]
    assert (sockets[1].process, sockets[1].pid) == ("python3", 52311)


def test_ss_without_header_is_an_error() -> None:
    with pytest.raises(ParseError, match="ss -tlnp"):
        parse_ss_listening("bash: ss: command not found")


def test_docker_29_socket_wording_is_a_server_error() -> None:
    text = (
        "Client: Docker Engine - Community\n Version:           29.2.1\n"
        "permission denied while trying to connect to the docker API at unix:///var/run/docker.sock"
    )
    version = parse_docker_version(text)
    assert version.client_version == "29.2.1" and version.server_version is None
    assert version.server_error.startswith("permission denied while trying to connect")
