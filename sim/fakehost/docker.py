"""The docker CLI against a simulated engine: containers are entries in the host state.

Only the scenario's `docker.pullable` images can be pulled (docker_pull.py), a running
container holds its memory, and stop/rm/start/restart/run change the state the way the real
engine would.
"""

from __future__ import annotations

import hashlib
import json
import sys
import time
from pathlib import Path
from typing import Any

from . import docker_pull, docker_run, gotemplate, procs
from .state import locked_state
from .units import docker_duration

_SOCKET = "unix:///var/run/docker.sock"
_PS_TABLE = (
    "table {{.ID}}\t{{.Image}}\t{{.Command}}\t{{.RunningFor}}\t{{.Status}}\t{{.Ports}}\t{{.Names}}"
)
_STATS_TABLE = (
    "table {{.ID}}\t{{.Name}}\t{{.CPUPerc}}\t{{.MemUsage}}\t{{.MemPerc}}\t{{.NetIO}}\t"
    "{{.BlockIO}}\t{{.PIDs}}"
)
_IMAGES_TABLE = "table {{.Repository}}\t{{.Tag}}\t{{.ID}}\t{{.CreatedSince}}\t{{.Size}}"
_HEADERS = {
    "ID": "CONTAINER ID",
    "RunningFor": "CREATED",
    "CreatedAt": "CREATED AT",
    "CreatedSince": "CREATED",
    "Names": "NAMES",
    "Image": "IMAGE",
    "Command": "COMMAND",
    "Status": "STATUS",
    "Ports": "PORTS",
    "State": "STATE",
    "Repository": "REPOSITORY",
    "Tag": "TAG",
    "Size": "SIZE",
    "Networks": "NETWORKS",
    "Labels": "LABELS",
    "Mounts": "MOUNTS",
    "LocalVolumes": "LOCAL VOLUMES",
    "Digest": "DIGEST",
    "Name": "NAME",
    "CPUPerc": "CPU %",
    "MemUsage": "MEM USAGE / LIMIT",
    "MemPerc": "MEM %",
    "NetIO": "NET I/O",
    "BlockIO": "BLOCK I/O",
    "PIDs": "PIDS",
    "Container": "CONTAINER",
}


def _err(text: str, code: int = 1) -> int:
    sys.stderr.write(text + "\n")
    return code


def _denied(path: str) -> int:
    return _err(
        f"permission denied while trying to connect to the docker API at {_SOCKET}: "
        f'Get "http://%2Fvar%2Frun%2Fdocker.sock/v1.52/{path}": dial unix /var/run/docker.sock: '
        "connect: permission denied"
    )


def _find_image(state: dict[str, Any], ref: str) -> dict[str, Any] | None:
    return docker_pull.find_image(state["docker"]["images"], ref)


def _find_container(state: dict[str, Any], ref: str) -> tuple[str, dict[str, Any]] | None:
    for name, c in state["docker"]["containers"].items():
        if ref in (name, c["id"]) or (len(ref) >= 4 and c["id"].startswith(ref)):
            return name, c
    return None


def _status(c: dict[str, Any], now: float) -> str:
    if c["state"] == "running":
        return "Up " + docker_duration(now - c["started_at"])
    if c["state"] == "created":
        return "Created"
    return f"Exited ({c['exit_code']}) {docker_duration(now - c['finished_at'])} ago"


def _ellipsis(text: str, width: int) -> str:
    return text if len(text) <= width else text[: width - 1] + "…"


def _ps_row(name: str, c: dict[str, Any], now: float, no_trunc: bool) -> dict[str, Any]:
    command = c["command"] if no_trunc else _ellipsis(c["command"], 20)
    created = time.strftime("%Y-%m-%d %H:%M:%S %z %Z", time.localtime(c["created_at"]))
    return {
        "Command": f'"{command}"',
        "CreatedAt": created,
        "ID": c["id"] if no_trunc else c["id"][:12],
        "Image": c["image"],
        "Labels": "",
        "LocalVolumes": "0",
        "Mounts": "",
        "Names": name,
        "Networks": "host",
        "Ports": c["ports"],
        "RunningFor": docker_duration(now - c["created_at"]) + " ago",
        "Size": "0B",
        "State": c["state"],
        "Status": _status(c, now),
    }


def _print_rows(rows: list[dict[str, Any]], fmt: str) -> None:
    if fmt == "json":
        fmt = "{{json .}}"
    if fmt.startswith("table"):
        body = fmt[len("table") :].strip()
        fields = gotemplate.render(body, {k: "\0" + k + "\0" for k in _HEADERS}).split("\t")
        header = [_HEADERS.get(f.strip("\0"), f.strip("\0").upper()) for f in fields]
        cells = [gotemplate.render(body, row).split("\t") for row in rows]
        sys.stdout.write(gotemplate.table([header, *cells]))
        return
    for row in rows:
        print(gotemplate.render(fmt, row))


def _option(args: list[str], *names: str) -> str | None:
    for i, arg in enumerate(args):
        for name in names:
            if arg == name and i + 1 < len(args):
                return args[i + 1]
            if arg.startswith(name + "="):
                return arg.split("=", 1)[1]
    return None


def _ps(args: list[str], state: dict[str, Any]) -> int:
    now = time.time()
    show_all = any(a in ("-a", "--all") or a in ("-aq", "-qa") for a in args)
    quiet = any(a in ("-q", "--quiet", "-aq", "-qa") for a in args)
    name_filter = (_option(args, "--filter", "-f") or "").removeprefix("name=") or None
    rows = [
        _ps_row(name, c, now, "--no-trunc" in args)
        for name, c in state["docker"]["containers"].items()
        if (show_all or c["state"] == "running") and (not name_filter or name_filter in name)
    ]
    rows.sort(key=lambda r: r["CreatedAt"], reverse=True)
    _print_rows(rows, "{{.ID}}" if quiet else _option(args, "--format") or _PS_TABLE)
    return 0


def _images(args: list[str], state: dict[str, Any]) -> int:
    rows = [
        {
            "Containers": "N/A",
            "CreatedAt": "",
            "CreatedSince": image["created"],
            "Digest": "<none>",
            "ID": image["id"],
            "Repository": image["repository"],
            "SharedSize": "N/A",
            "Size": image["size"],
            "Tag": image["tag"],
            "UniqueSize": "N/A",
            "VirtualSize": image["size"],
        }
        for image in state["docker"]["images"]
    ]
    quiet = "-q" in args or "--quiet" in args
    _print_rows(rows, "{{.ID}}" if quiet else _option(args, "--format") or _IMAGES_TABLE)
    return 0


def _iso(ts: float) -> str:
    if not ts:
        return "0001-01-01T00:00:00Z"
    return time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(ts)) + f".{int(ts % 1 * 1e9):09d}Z"


def _inspect_container(name: str, c: dict[str, Any]) -> dict[str, Any]:
    argv = c["command"].split()
    return {
        "Id": c["id"],
        "Created": _iso(c["created_at"]),
        "Path": argv[0] if argv else "",
        "Args": argv[1:],
        "State": {
            "Status": c["state"],
            "Running": c["state"] == "running",
            "Paused": False,
            "Restarting": False,
            "OOMKilled": False,
            "Dead": False,
            "Pid": c["gpu_process"]["pid"]
            if c["state"] == "running" and c.get("gpu_process")
            else 0,
            "ExitCode": c["exit_code"],
            "Error": "",
            "StartedAt": _iso(c["started_at"]),
            "FinishedAt": _iso(c.get("finished_at", 0)),
        },
        "Image": "sha256:" + hashlib.sha256(c["image"].encode()).hexdigest(),
        "Name": "/" + name,
        "RestartCount": 0,
        "HostConfig": {
            "NetworkMode": "host",
            "Runtime": "runc",
            "AutoRemove": c.get("auto_remove", False),
            "DeviceRequests": [
                {
                    "Driver": "",
                    "Count": -1,
                    "DeviceIDs": None,
                    "Capabilities": [["gpu"]],
                    "Options": {},
                }
            ],
        },
        "Config": {"Hostname": name, "Image": c["image"], "Cmd": argv, "Env": c.get("env", [])},
    }


def _inspect(args: list[str], state: dict[str, Any]) -> int:
    fmt = _option(args, "--format", "-f")
    targets = _positional(args, {"--format", "-f", "--type"})
    found, code = [], 0
    for ref in targets:
        hit = _find_container(state, ref)
        if hit:
            found.append(_inspect_container(*hit))
            continue
        image = _find_image(state, ref)
        if image:
            found.append(
                {
                    "Id": "sha256:" + image["id"],
                    "RepoTags": [f"{image['repository']}:{image['tag']}"],
                    "Architecture": "arm64",
                    "Os": "linux",
                }
            )
            continue
        sys.stderr.write(f"Error: No such object: {ref}\n")
        code = 1
    if fmt:
        for obj in found:
            print(gotemplate.render(fmt, obj))
    else:
        print(json.dumps(found, indent=4, ensure_ascii=False))
    return code


def _positional(args: list[str], value_options: set[str]) -> list[str]:
    """Arguments that are neither options nor the values of options."""
    found, skip = [], False
    for arg in args:
        if skip:
            skip = False
        elif arg in value_options:
            skip = True
        elif not arg.startswith("-"):
            found.append(arg)
    return found


def _logs(args: list[str], state: dict[str, Any], host_dir: Path) -> int:
    refs = _positional(args, {"--tail", "-n", "--since", "--until"})
    hit = _find_container(state, refs[0]) if refs else None
    if hit is None:
        return _err(f"Error response from daemon: No such container: {refs[0] if refs else ''}")
    log_file = procs.log_path(host_dir, hit[1]["id"])
    extra = log_file.read_text(errors="replace") if log_file.is_file() else ""
    lines = (hit[1]["logs"] + extra).splitlines()
    tail = _option(args, "--tail", "-n")
    if tail and tail.isdigit():
        lines = lines[-int(tail) :] if int(tail) else []
    sys.stdout.write("".join(line + "\n" for line in lines))
    return 0


def _lifecycle(verb: str, args: list[str], host_dir: Path) -> int:
    force = any(a in ("-f", "--force") for a in args)
    refs = [a for a in args if not a.startswith("-")]
    if not refs:
        return _err(f"docker: '{verb}' requires at least 1 argument", 1)
    code = 0
    with locked_state(host_dir) as state:
        containers = state["docker"]["containers"]
        now = time.time()
        for ref in refs:
            hit = _find_container(state, ref)
            if hit is None:
                code = _err(f"Error response from daemon: No such container: {ref}")
                continue
            name, c = hit
            if verb == "rm":
                if c["state"] == "running" and not force:
                    code = _err(
                        "Error response from daemon: cannot remove container "
                        f'"{name}": container is '
                        "running: stop the container before removing or force remove"
                    )
                    continue
                procs.signal_ours(c.get("pids", []), host_dir)
                docker_run.stopped(c)
                del containers[name]
            elif verb == "stop":
                if c["state"] == "running":
                    procs.signal_ours(c.get("pids", []), host_dir)
                    docker_run.stopped(c)
                    c.update(state="exited", exit_code=0, finished_at=now)
                    if c.get("auto_remove"):
                        del containers[name]
            else:
                c.update(state="running", started_at=now)
            print(ref)
    return code


def _version(args: list[str], state: dict[str, Any]) -> int:
    d = state["docker"]
    client = {
        "Version": d["version"],
        "ApiVersion": d["api_version"],
        "Os": "linux",
        "Arch": "arm64",
    }
    fmt = _option(args, "--format", "-f")
    if fmt:
        if not d["socket_access"]:
            return _denied("version")
        print(gotemplate.render(fmt, {"Client": client, "Server": {**client, "Components": []}}))
        return 0
    print("Client: Docker Engine - Community")
    print(f" Version:           {d['version']}\n API version:       {d['api_version']}")
    print(" Go version:        go1.25.6\n Git commit:        a5c7197")
    print(" Built:             Mon Feb  2 17:17:28 2026")
    print(" OS/Arch:           linux/arm64\n Context:           default")
    if not d["socket_access"]:
        return _denied("version")
    print(f"\nServer: Docker Engine - Community\n Engine:\n  Version:          {d['version']}")
    print(
        f"  API version:      {d['api_version']} (minimum version 1.44)\n"
        "  Go version:       go1.25.6"
    )
    print("  Git commit:       6bc6209\n  Built:            Mon Feb  2 17:17:28 2026")
    print("  OS/Arch:          linux/arm64\n  Experimental:     false\n containerd:")
    print(
        "  Version:          v2.2.1\n  GitCommit:        dea7da592f5d1d2b7755e3a161be07f43fad8f75"
    )
    print(" runc:\n  Version:          1.3.4\n  GitCommit:        v1.3.4-0-gd6d73eb8")
    print(" docker-init:\n  Version:          0.19.0\n  GitCommit:        de40ad0")
    return 0


def _info(args: list[str], state: dict[str, Any]) -> int:
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
        return _denied("info")
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
        f" Kernel Version: {state['kernel']}\n Operating System: Ubuntu 24.04.3 LTS\n OSType: linux"
    )
    print(f" Architecture: aarch64\n CPUs: {state['cpus']}\n Total Memory: 121.7GiB")
    print(f" Name: {state['hostname']}\n Docker Root Dir: /var/lib/docker\n Debug Mode: false")
    return 0


def run_docker(args: list[str], state: dict[str, Any], host_dir: Path) -> int:
    if not args or args[0] in ("-h", "--help"):
        print("Usage:  docker [OPTIONS] COMMAND\n\nA self-sufficient runtime for containers")
        return 0
    verb, rest = args[0], args[1:]
    if verb == "container" and rest:
        verb, rest = {"ls": "ps", "list": "ps"}.get(rest[0], rest[0]), rest[1:]
    if verb == "image" and rest:
        verb, rest = {"ls": "images", "list": "images"}.get(rest[0], rest[0]), rest[1:]
    if verb == "version":
        return _version(rest, state)
    if verb == "info":
        return _info(rest, state)
    if not state["docker"]["socket_access"]:
        return _denied({"ps": "containers/json", "images": "images/json"}.get(verb, verb))
    readers = {"ps": _ps, "images": _images, "inspect": _inspect}
    if verb in readers:
        return readers[verb](rest, state)
    if verb == "logs":
        return _logs(rest, state, host_dir)
    if verb == "stats":
        fmt = _option(rest, "--format") or _STATS_TABLE
        _print_rows(docker_run.stats_rows(state), fmt)
        return 0
    if verb == "run":
        return docker_run.run(rest, host_dir)
    if verb == "exec":
        return docker_run.exec_(rest, host_dir, _find_container)
    if verb == "pull":
        return docker_pull.pull(rest, host_dir)
    if verb in ("stop", "rm", "start", "restart", "kill"):
        return _lifecycle("stop" if verb == "kill" else verb, rest, host_dir)
    return _err(f"docker: '{verb}' is not simulated on this host.\nSee 'docker --help'")
