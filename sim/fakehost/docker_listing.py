"""`docker ps`, `images`, `inspect`, `logs` and the table layout of `stats`: what the engine
holds, printed the way the docker CLI prints it (Go templates, column headers, `--no-trunc`)."""

from __future__ import annotations

import hashlib
import json
import sys
import time
from pathlib import Path
from typing import Any

from . import docker_pull, gotemplate, procs
from .units import docker_duration

_PS_TABLE = (
    "table {{.ID}}\t{{.Image}}\t{{.Command}}\t{{.RunningFor}}\t{{.Status}}\t{{.Ports}}\t{{.Names}}"
)

STATS_TABLE = (
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


def err_line(text: str, code: int = 1) -> int:
    sys.stderr.write(text + "\n")
    return code


def find_image(state: dict[str, Any], ref: str) -> dict[str, Any] | None:
    return docker_pull.find_image(state["docker"]["images"], ref)


def find_container(state: dict[str, Any], ref: str) -> tuple[str, dict[str, Any]] | None:
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


def print_rows(rows: list[dict[str, Any]], fmt: str) -> None:
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


def option(args: list[str], *names: str) -> str | None:
    for i, arg in enumerate(args):
        for name in names:
            if arg == name and i + 1 < len(args):
                return args[i + 1]
            if arg.startswith(name + "="):
                return arg.split("=", 1)[1]
    return None


def ps(args: list[str], state: dict[str, Any]) -> int:
    now = time.time()
    show_all = any(a in ("-a", "--all") or a in ("-aq", "-qa") for a in args)
    quiet = any(a in ("-q", "--quiet", "-aq", "-qa") for a in args)
    name_filter = (option(args, "--filter", "-f") or "").removeprefix("name=") or None
    rows = [
        _ps_row(name, c, now, "--no-trunc" in args)
        for name, c in state["docker"]["containers"].items()
        if (show_all or c["state"] == "running") and (not name_filter or name_filter in name)
    ]
    rows.sort(key=lambda r: r["CreatedAt"], reverse=True)
    print_rows(rows, "{{.ID}}" if quiet else option(args, "--format") or _PS_TABLE)
    return 0


def images(args: list[str], state: dict[str, Any]) -> int:
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
    print_rows(rows, "{{.ID}}" if quiet else option(args, "--format") or _IMAGES_TABLE)
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


def inspect(args: list[str], state: dict[str, Any]) -> int:
    fmt = option(args, "--format", "-f")
    targets = _positional(args, {"--format", "-f", "--type"})
    found, code = [], 0
    for ref in targets:
        hit = find_container(state, ref)
        if hit:
            found.append(_inspect_container(*hit))
            continue
        image = find_image(state, ref)
        if image:
            found.append(
                {
                    "Id": "sha256:" + image["id"],
                    "RepoTags": [f"{image['repository']}:{image['tag']}"],
                    # the registry's manifest digest a pull records (one per image ID here)
                    "RepoDigests": [
                        f"{image['repository']}@sha256:"
                        + hashlib.sha256(image["id"].encode()).hexdigest()
                    ],
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


def logs(args: list[str], state: dict[str, Any], host_dir: Path) -> int:
    refs = _positional(args, {"--tail", "-n", "--since", "--until"})
    hit = find_container(state, refs[0]) if refs else None
    if hit is None:
        return err_line(f"Error response from daemon: No such container: {refs[0] if refs else ''}")
    log_file = procs.log_path(host_dir, hit[1]["id"])
    extra = log_file.read_text(errors="replace") if log_file.is_file() else ""
    lines = (hit[1]["logs"] + extra).splitlines()
    tail = option(args, "--tail", "-n")
    if tail and tail.isdigit():
        lines = lines[-int(tail) :] if int(tail) else []
    sys.stdout.write("".join(line + "\n" for line in lines))
    return 0
