"""`docker run`, `docker exec`, `docker pull` and `docker stats` against the simulated engine.

`run` records what the real engine would keep (env, mounts, devices, network, ipc, shm size,
ulimits, command); a command that starts an engine (`ray start …`, `vllm serve …`) runs detached
as the container's main process and the container exits when it does; its output lands in the
container log, where `docker logs` finds it. `exec -d` detaches too, but its output goes nowhere:
`docker logs` shows PID 1's output only (procs.detach says where that comes from). A plain
`exec` runs apart from its client (procs.run_apart): killing the client leaves it running.
"""

from __future__ import annotations

import hashlib
import sys
import time
from pathlib import Path
from typing import Any

from . import docker_pull, incontainer, procs
from .container import Container, env_of
from .docker_pull import find_image, image_ref
from .memory import memory_kb
from .state import locked_state, read_state

RUN_VALUE_OPTS = {
    "-e", "--env", "-p", "--publish", "-v", "--volume", "--name", "--network", "--net", "--gpus",
    "--ipc", "--shm-size", "--ulimit", "--device", "-w", "--workdir", "--entrypoint", "--restart",
    "-m", "--memory", "--runtime", "-u", "--user", "--env-file", "--label", "-l", "--mount",
    "--cap-add", "--security-opt", "--pid", "--hostname", "-h", "--add-host", "--platform",
    "--pull", "--cpus", "--cpuset-cpus", "--group-add", "--tmpfs", "--log-driver", "--log-opt",
    "--health-cmd", "--stop-signal",
}  # fmt: skip
_EXEC_VALUE_OPTS = {"-e", "--env", "-u", "--user", "-w", "--workdir", "--env-file"}
_LIST_OPTS = {
    "-e": "env", "--env": "env", "-v": "mounts", "--volume": "mounts", "--device": "devices",
    "--ulimit": "ulimits", "-p": "publish", "--publish": "publish",
}  # fmt: skip
_ONE_OPTS = {
    "--name": "name", "--network": "network", "--net": "network", "--ipc": "ipc",
    "--shm-size": "shm_size", "--gpus": "gpus", "--entrypoint": "entrypoint",
}  # fmt: skip


def err(text: str, code: int = 1) -> int:
    sys.stderr.write(text + "\n")
    return code


def pull_error(ref: str) -> int:
    repo, _tag = image_ref(ref)
    registry = repo.split("/")[0] if "." in repo.split("/")[0] else "registry-1.docker.io"
    return err(
        f'docker: Error response from daemon: Get "https://{registry}/v2/": dial tcp: lookup '
        f"{registry} on 127.0.0.53:53: server misbehaving\n\n"
        "Run 'docker run --help' for more information",
        125,
    )


def _pull_into(state: dict[str, Any], ref: str) -> dict[str, Any] | None:
    """`docker run`'s implicit pull: the image becomes local, its layers listed as pulled
    (tests/fixtures/jobs/docker_run_implicit_pull_nvcr_base_ubuntu_then_nvidia_smi_8xA100.txt)."""
    image = docker_pull.take(state, ref) if state.get("internet", True) else None
    if image is None:
        return None
    repo, tag = image_ref(ref)
    print(f"{tag}: Pulling from {docker_pull.pulled_from(repo)}")
    for layer, _size in docker_pull.layers(image):
        print(f"{layer}: Pull complete")
    docker_pull.print_done(image, ref)
    return image


def _parse_run(args: list[str]) -> tuple[dict[str, Any], list[str]]:
    opts: dict[str, Any] = {"env": [], "mounts": [], "devices": [], "ulimits": [], "publish": []}
    i = 0
    while i < len(args) and args[i].startswith("-"):
        key, eq, value = args[i].partition("=")
        if key in RUN_VALUE_OPTS and not eq:
            i += 1
            value = args[i] if i < len(args) else ""
        if key in _LIST_OPTS:
            opts[_LIST_OPTS[key]].append(value)
        elif key in _ONE_OPTS:
            opts[_ONE_OPTS[key]] = value
        elif key == "--rm":
            opts["auto_remove"] = True
        elif key == "--privileged":
            opts["privileged"] = True
        elif key in ("-d", "--detach") or (
            not key.startswith("--") and "d" in key[1:] and key not in RUN_VALUE_OPTS
        ):
            opts["detach"] = True
        i += 1
    return opts, args[i:]


def _home_path(path: str, state: dict[str, Any]) -> str:
    home = f"/home/{state['user']}"
    return home + path[1:] if path.startswith("~") else path


def run(args: list[str], host_dir: Path) -> int:
    opts, rest = _parse_run(args)
    if not rest:
        return err(
            "docker: 'docker run' requires at least 1 argument\n\nSee 'docker run --help'.", 125
        )
    ref, command = rest[0], rest[1:]
    if opts.get("entrypoint"):
        command = [opts["entrypoint"], *command]
    with locked_state(host_dir) as state:
        image = find_image(state["docker"]["images"], ref)
        if image is None:
            repo, tag = image_ref(ref)
            sys.stderr.write(f"Unable to find image '{repo}:{tag}' locally\n")
            image = _pull_into(state, ref)
            if image is None:
                return pull_error(ref)
        containers = state["docker"]["containers"]
        now = time.time()
        cid = hashlib.sha256(f"{opts.get('name')}{ref}{now}".encode()).hexdigest()
        name = opts.get("name") or f"sim_{cid[:6]}"
        if name in containers:
            return err(
                "docker: Error response from daemon: Conflict. The container name "
                f'"/{name}" is already in use by container "{containers[name]["id"]}". '
                "You have to remove (or rename) that container to be able to reuse that "
                "name.\n\nRun 'docker run --help' for more information",
                125,
            )
        detach = bool(opts.get("detach"))
        foreground = not detach and bool(command)
        container = {
            "id": cid,
            "image": ref,
            "command": " ".join(command) or "/bin/bash",
            "argv": command,
            "state": "running" if detach or foreground else "exited",
            "up_for_s": 0,
            "exit_code": 0,
            "memory_kb": image["run_memory_kb"],
            "image_memory_kb": image["run_memory_kb"],
            "ports": "",
            "listen": [],
            "logs": "",
            "gpu_process": None,
            "created_at": now,
            "started_at": now,
            "finished_at": now,
            "auto_remove": bool(opts.get("auto_remove")),
            "env": [e for e in opts["env"] if "=" in e],
            "mounts": [_home_path(m, state) for m in opts["mounts"]],
            "devices": opts["devices"],
            "ulimits": opts["ulimits"],
            "network": opts.get("network", "bridge"),
            "ipc": opts.get("ipc", "private"),
            "shm_size": opts.get("shm_size", "64m"),
            "gpus": opts.get("gpus", ""),
            "privileged": bool(opts.get("privileged")),
            "pids": [],
            "ray": None,
            "serve": None,
        }
        foreign = _foreign_platform(image, state)
        if foreign:
            sys.stderr.write(foreign)
            program = command[0] if command else "/bin/bash"
            container.update(
                state="exited",
                exit_code=255,
                logs=f"exec /usr/bin/{program.rsplit('/', 1)[-1]}: exec format error\n",
            )
        if detach or foreground or not container["auto_remove"]:
            containers[name] = container
    if foreign and detach:
        print(cid)
        return 0
    if foreign:
        sys.stderr.write(container["logs"])
        return 255
    if detach:
        if incontainer.mentions_engine(command):
            _start_detached(host_dir, name, cid, command, [], main=True)
        print(cid)
        return 0
    return _run_foreground(host_dir, name, cid, command) if foreground else 0


def _foreign_platform(image: dict[str, Any], state: dict[str, Any]) -> str:
    """Docker's warning when the image was built for another architecture than the host's; its
    binaries then cannot run, so the container exits at once with `exec format error` in its
    log (openchangelog#21, mhddos_proxy#33: an amd64-only image on an arm64 host)."""
    host = {"aarch64": "linux/arm64", "x86_64": "linux/amd64"}.get(state.get("arch", ""), "")
    platform = image.get("platform") or host  # None: a manifest list with the host's platform
    if not host or platform == host:
        return ""
    detected = "linux/arm64/v8" if host == "linux/arm64" else host
    return (
        f"WARNING: The requested image's platform ({platform}) does not match the detected "
        f"host platform ({detected}) and no specific platform was requested\n"
    )


def _run_foreground(host_dir: Path, name: str, cid: str, argv: list[str]) -> int:
    """`docker run` without -d: the command's output comes back and its exit status is the
    run's; the container then exits (and goes, with --rm), as `docker run --rm IMAGE CMD` does."""
    record = read_state(host_dir)["docker"]["containers"][name]
    code = incontainer.run_argv(Container(host_dir, name, cid, env_of(record, [])), argv)
    _main_exited(host_dir, cid, code)
    return code


def _start_detached(
    host_dir: Path, name: str, cid: str, argv: list[str], env: list[str], main: bool
) -> None:
    record = read_state(host_dir)["docker"]["containers"][name]
    ctr = Container(host_dir, name, cid, env_of(record, env))

    def finished(code: int) -> None:
        if main:
            _main_exited(host_dir, cid, code)

    pid = procs.detach(host_dir, cid, lambda: incontainer.run_argv(ctr, argv), finished, main)
    _add_pid(host_dir, name, cid, pid)


def _add_pid(host_dir: Path, name: str, cid: str, pid: int) -> None:
    with locked_state(host_dir) as state:
        container = state["docker"]["containers"].get(name)
        if container and container["id"] == cid:
            container.setdefault("pids", []).append(pid)


def _main_exited(host_dir: Path, cid: str, code: int) -> None:
    """The container's main process ended: the container exits (and goes, with --rm)."""
    with locked_state(host_dir) as state:
        for name, c in list(state["docker"]["containers"].items()):
            if c["id"] == cid and c["state"] == "running":
                stopped(c)
                c.update(state="exited", exit_code=code, finished_at=time.time())
                if c.get("auto_remove"):
                    del state["docker"]["containers"][name]


def stopped(c: dict[str, Any]) -> None:
    """What a container started here loses when it stops: engines, ports, GPU memory."""
    if "image_memory_kb" in c:
        c.update(ray=None, serve=None, gpu_process=None, pids=[], listen=[])
        c["memory_kb"] = c["image_memory_kb"]


def exec_(args: list[str], host_dir: Path, find: Any) -> int:
    detach, env, i = False, [], 0
    while i < len(args) and args[i].startswith("-"):
        key, eq, value = args[i].partition("=")
        if key in _EXEC_VALUE_OPTS and not eq:
            i += 1
            value = args[i] if i < len(args) else ""
        if key in ("-e", "--env"):
            env.append(value)
        elif key in ("-d", "--detach") or (not key.startswith("--") and "d" in key[1:]):
            detach = True
        i += 1
    if len(args) - i < 2:
        return err(
            "docker: \"exec\" requires at least 2 arguments.\n\nSee 'docker exec --help'.", 1
        )
    ref, argv = args[i], args[i + 1 :]
    hit = find(read_state(host_dir), ref)
    if hit is None:
        return err(f"Error response from daemon: No such container: {ref}")
    name, record = hit
    if record["state"] != "running":
        return err(f"Error response from daemon: container {record['id']} is not running")
    if detach:
        _start_detached(host_dir, name, record["id"], argv, env, main=False)
        return 0
    ctr = Container(host_dir, name, record["id"], env_of(record, env))
    sys.stdout.flush()
    started: list[int] = []

    def record(pid: int) -> None:
        started.append(pid)
        _add_pid(host_dir, name, ctr.id, pid)

    code = procs.run_apart(lambda: incontainer.run_argv(ctr, argv), record)
    with locked_state(host_dir) as state:
        container = state["docker"]["containers"].get(name)
        if container and started and started[0] in container.get("pids", []):
            container["pids"].remove(started[0])
    return code


def _stats_size(num_bytes: float) -> str:
    """docker stats sizes: `215.6MiB`, `95.73GiB` (four significant digits)."""
    for unit in ("B", "KiB", "MiB", "GiB"):
        if num_bytes < 1024 or unit == "GiB":
            return f"{num_bytes:.4g}{unit}"
        num_bytes /= 1024
    return f"{num_bytes:.4g}GiB"


def stats_rows(state: dict[str, Any]) -> list[dict[str, Any]]:
    total = memory_kb(state)["MemTotal"] * 1024
    rows = []
    for name, c in state["docker"]["containers"].items():
        if c["state"] != "running":
            continue
        used = c["memory_kb"] * 1024
        busy = bool(c.get("serve"))
        rows.append(
            {
                "BlockIO": "1.2GB / 0B" if busy else "0B / 0B",
                "CPUPerc": "101.52%" if busy else "0.31%",
                "Container": c["id"][:12],
                "ID": c["id"][:12],
                "MemPerc": f"{used / total * 100:.2f}%",
                "MemUsage": f"{_stats_size(used)} / {_stats_size(total)}",
                "Name": name,
                "NetIO": "0B / 0B",
                "PIDs": "212" if busy else "12",
            }
        )
    return rows
