"""Docker: engine versions, runtimes/CDI, and what containers are running."""

import pytest

from tests.support.captures import capture
from tools.recon.parsers import (
    ParseError,
    parse_docker_info,
    parse_docker_ps_json,
    parse_docker_version,
)


def test_docker_info_on_spark() -> None:
    info = parse_docker_info(capture("spark_docker_info_head40.txt"))
    assert (info.client_version, info.server_version) == ("29.2.1", "29.2.1")
    assert (info.containers, info.containers_running, info.images) == (0, 0, 21)
    assert info.runtimes == ["io.containerd.runc.v2", "runc"]
    assert info.cdi_spec_dirs == ["/etc/cdi", "/var/run/cdi"]
    assert (info.cgroup_driver, info.storage_driver) == ("systemd", "overlay2")


def test_docker_info_without_daemon_access() -> None:
    text = (
        "Client: Docker Engine - Community\n Version:    29.2.1\n Context:    default\n\n"
        "Server:\nERROR: permission denied while trying to connect to the Docker daemon socket "
        'at unix:///var/run/docker.sock: Get "http://%2Fvar%2Frun%2Fdocker.sock/v1.52/info"\n'
    )
    info = parse_docker_info(text)
    assert info.client_version == "29.2.1"
    assert info.server_version is None
    assert info.server_error is not None
    assert info.server_error.startswith("permission denied while trying to connect")


DOCKER_VERSION = """\
Client: Docker Engine - Community
 Version:           29.2.1
 API version:       1.52
 Go version:        go1.25.6
 OS/Arch:           linux/arm64
 Context:           default

Server: Docker Engine - Community
 Engine:
  Version:          29.2.1
  API version:      1.52 (minimum version 1.44)
  OS/Arch:          linux/arm64
 containerd:
  Version:          v2.2.1
 runc:
  Version:          1.3.4
 docker-init:
  Version:          0.19.0
"""


def test_docker_version_text() -> None:
    version = parse_docker_version(DOCKER_VERSION)
    assert (version.client_version, version.server_version) == ("29.2.1", "29.2.1")
    assert (version.os_arch, version.server_api_version) == ("linux/arm64", "1.52")
    assert version.components["containerd"] == "v2.2.1"
    assert version.server_error is None


def test_docker_version_when_daemon_is_down() -> None:
    text = DOCKER_VERSION.split("Server:")[0] + (
        "Cannot connect to the Docker daemon at unix:///var/run/docker.sock. "
        "Is the docker daemon running?\n"
    )
    version = parse_docker_version(text)
    assert version.client_version == "29.2.1"
    assert version.server_version is None
    assert version.server_error is not None
    assert "Is the docker daemon running?" in version.server_error


def test_docker_ps_json_line_with_truncated_command() -> None:
    [container] = parse_docker_ps_json(capture("generic_docker_ps_format_json.txt"))
    assert (container.id, container.image, container.state) == ("a762a2b37a1d", "nginx", "running")
    assert container.command == '"/docker-entrypoint.…"'
    assert container.names == ["boring_keldysh"]
    assert container.labels["maintainer"] == "NGINX Docker Maintainers <docker-maint@nginx.com>"


def test_docker_ps_json_array_and_empty() -> None:
    text = (
        '[{"ID":"1da3039c0282","Image":"nvcr.io/nvidia/vllm:25.11-py3","Names":"vllm_node",'
        '"State":"running","Status":"Up 3 weeks","Command":"\\"/bin/bash -c \'ray s…\\""},'
        '{"ID":"77aa","Image":"busybox","Names":"old","State":"exited","Status":"Exited (0)"}]'
    )
    containers = parse_docker_ps_json(text)
    assert [(c.names, c.state) for c in containers] == [
        (["vllm_node"], "running"),
        (["old"], "exited"),
    ]
    assert parse_docker_ps_json("") == []


def test_docker_ps_json_rejects_table_output() -> None:
    with pytest.raises(ParseError, match="JSON"):
        parse_docker_ps_json(capture("spark_docker_ps_ray_node.txt"))
