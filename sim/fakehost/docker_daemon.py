"""`docker version` and `docker info`: the client, and the daemon when the user may reach it.

Docker CE 29.x as on a Spark (shared/fixtures/recon/spark_docker_info_head40.txt); architecture,
OS, CPUs and memory are the host's own. A user outside the `docker` group gets the daemon's
`permission denied` on the socket.
"""

from __future__ import annotations

from typing import Any

from . import gotemplate
from .docker_listing import err_line, option
from .memory import memory_kb

_SOCKET = "unix:///var/run/docker.sock"


def _go_arch(state: dict[str, Any]) -> str:
    return {"aarch64": "arm64", "x86_64": "amd64"}.get(state["arch"], state["arch"])


def _os_name(state: dict[str, Any]) -> str:
    for line in state["files"].get("/etc/os-release", "").splitlines():
        if line.startswith("PRETTY_NAME="):
            return line.partition("=")[2].strip('"')
    return "Linux"


def denied(path: str) -> int:
    return err_line(
        f"permission denied while trying to connect to the docker API at {_SOCKET}: "
        f'Get "http://%2Fvar%2Frun%2Fdocker.sock/v1.52/{path}": dial unix /var/run/docker.sock: '
        "connect: permission denied"
    )


def version(args: list[str], state: dict[str, Any]) -> int:
    d = state["docker"]
    client = {
        "Version": d["version"],
        "ApiVersion": d["api_version"],
        "Os": "linux",
        "Arch": _go_arch(state),
    }
    fmt = option(args, "--format", "-f")
    if fmt:
        if not d["socket_access"]:
            return denied("version")
        print(gotemplate.render(fmt, {"Client": client, "Server": {**client, "Components": []}}))
        return 0
    print("Client: Docker Engine - Community")
    print(f" Version:           {d['version']}\n API version:       {d['api_version']}")
    print(" Go version:        go1.25.6\n Git commit:        a5c7197")
    print(" Built:             Mon Feb  2 17:17:28 2026")
    print(f" OS/Arch:           linux/{_go_arch(state)}\n Context:           default")
    if not d["socket_access"]:
        return denied("version")
    print(f"\nServer: Docker Engine - Community\n Engine:\n  Version:          {d['version']}")
    print(
        f"  API version:      {d['api_version']} (minimum version 1.44)\n"
        "  Go version:       go1.25.6"
    )
    print("  Git commit:       6bc6209\n  Built:            Mon Feb  2 17:17:28 2026")
    print(f"  OS/Arch:          linux/{_go_arch(state)}\n  Experimental:     false\n containerd:")
    print(
        "  Version:          v2.2.1\n  GitCommit:        dea7da592f5d1d2b7755e3a161be07f43fad8f75"
    )
    print(" runc:\n  Version:          1.3.4\n  GitCommit:        v1.3.4-0-gd6d73eb8")
    print(" docker-init:\n  Version:          0.19.0\n  GitCommit:        de40ad0")
    return 0


def info(args: list[str], state: dict[str, Any]) -> int:
    d = state["docker"]
    containers = d["containers"].values()
    running = sum(c["state"] == "running" for c in containers)
    print(f"Client: Docker Engine - Community\n Version:    {d['version']}\n Context:    default")
    print(
        " Debug Mode: false\n Plugins:\n  buildx: Docker Buildx (Docker Inc.)\n"
        "    Version:  v0.31.1"
    )
    print("    Path:     /usr/libexec/docker/cli-plugins/docker-buildx")
    print("  compose: Docker Compose (Docker Inc.)\n    Version:  v5.0.2")
    print("    Path:     /usr/libexec/docker/cli-plugins/docker-compose\n")
    if not d["socket_access"]:
        print("Server:")
        return denied("info")
    print(f"Server:\n Containers: {len(containers)}\n  Running: {running}\n  Paused: 0")
    print(f"  Stopped: {len(containers) - running}\n Images: {len(d['images'])}")
    print(
        f" Server Version: {d['version']}\n Storage Driver: overlay2\n  Backing Filesystem: extfs"
    )
    print(
        "  Supports d_type: true\n  Using metacopy: false\n  Native Overlay Diff: true\n"
        "  userxattr: false"
    )
    print(" Logging Driver: json-file\n Cgroup Driver: systemd\n Cgroup Version: 2\n Plugins:")
    print("  Volume: local\n  Network: bridge host ipvlan macvlan null overlay")
    print("  Log: awslogs fluentd gcplogs gelf journald json-file local splunk syslog")
    print(" CDI spec directories:\n  /etc/cdi\n  /var/run/cdi\n Swarm: inactive")
    print(
        f" Runtimes: {' '.join(d['runtimes'])}\n Default Runtime: runc\n Init Binary: docker-init"
    )
    print(" containerd version: dea7da592f5d1d2b7755e3a161be07f43fad8f75")
    print(
        f" Kernel Version: {state['kernel']}\n Operating System: {_os_name(state)}\n OSType: linux"
    )
    total_gib = memory_kb(state)["MemTotal"] / 1024 / 1024
    print(f" Architecture: {state['arch']}\n CPUs: {state['cpus']}")
    print(f" Total Memory: {total_gib:.1f}GiB")
    print(f" Name: {state['hostname']}\n Docker Root Dir: /var/lib/docker\n Debug Mode: false")
    return 0
