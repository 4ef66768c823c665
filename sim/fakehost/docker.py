"""The docker CLI against a simulated engine: containers are entries in the host state.

Only the scenario's `docker.pullable` images can be pulled (docker_pull.py), a running
container holds its memory, and stop/rm/start/restart/run change the state the way the real
engine would; `rmi` answers as moby does (docker_rmi.py).
"""

from __future__ import annotations

import shutil
import time
from pathlib import Path
from typing import Any

from . import docker_archive, docker_build, docker_pull, docker_rmi, docker_run, procs, served
from .container_files import fs_root
from .docker_daemon import denied, info, version
from .docker_listing import (
    STATS_TABLE,
    err_line,
    find_container,
    images,
    inspect,
    logs,
    option,
    print_rows,
    ps,
)
from .docker_walled import walled_refusal
from .state import locked_state

STATS_INTERVAL_S = 1.0  # the daemon's stats collector interval
_IMAGE_VERBS = {"ls": "images", "list": "images", "rm": "rmi", "remove": "rmi"}  # `docker image …`


def _lifecycle(verb: str, args: list[str], host_dir: Path) -> int:
    force = any(a in ("-f", "--force") for a in args)
    refs = [a for a in args if not a.startswith("-")]
    if not refs:
        return err_line(f"docker: '{verb}' requires at least 1 argument", 1)
    code = 0
    before, closing = served.endpoints(host_dir), {}
    with locked_state(host_dir) as state:
        containers = state["docker"]["containers"]
        now = time.time()
        for ref in refs:
            hit = find_container(state, ref)
            if hit is None:
                code = err_line(f"Error response from daemon: No such container: {ref}")
                continue
            name, c = hit
            port = str((c.get("serve") or {}).get("port", ""))
            if verb in ("rm", "stop") and port in before:
                closing[port] = before[port]  # an engine serves here: wait for it to close
            if verb == "rm":
                if c["state"] == "running" and not force:
                    code = err_line(
                        "Error response from daemon: cannot remove container "
                        f'"{name}": container is '
                        "running: stop the container before removing or force remove"
                    )
                    continue
                procs.signal_ours(c.get("pids", []), host_dir)
                docker_run.stopped(c)
                shutil.rmtree(fs_root(host_dir, c["id"]), ignore_errors=True)
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
    served.wait_closed(host_dir, closing)
    return code


def _await_second_sample() -> None:
    """`docker stats --no-stream` answers once the daemon's stats collector, which samples every
    second, has sampled twice, so that the CPU figure has a previous one to compare with: 1 to 2
    seconds (moby/moby#40437; #40478 measured 1.17 s and 1.86 s). No running container, no wait."""
    time.sleep(2 * STATS_INTERVAL_S - time.time() % STATS_INTERVAL_S)


def run_docker(args: list[str], state: dict[str, Any], host_dir: Path) -> int:
    if not args or args[0] in ("-h", "--help"):
        print("Usage:  docker [OPTIONS] COMMAND\n\nA self-sufficient runtime for containers")
        return 0
    verb, rest = args[0], args[1:]
    if verb == "container" and rest:
        verb, rest = {"ls": "ps", "list": "ps"}.get(rest[0], rest[0]), rest[1:]
    if verb == "image" and rest:
        verb, rest = _IMAGE_VERBS.get(rest[0], rest[0]), rest[1:]
    refused = walled_refusal(verb, rest)
    if refused is not None:
        return refused
    if verb == "version":
        return version(rest, state)
    if verb == "info":
        return info(rest, state)
    if not state["docker"]["socket_access"]:
        return denied({"ps": "containers/json", "images": "images/json"}.get(verb, verb))
    readers = {"ps": ps, "images": images, "inspect": inspect}
    if verb in readers:
        return readers[verb](rest, state)
    if verb == "logs":
        return logs(rest, state, host_dir)
    if verb == "stats":
        fmt = option(rest, "--format") or STATS_TABLE
        rows = docker_run.stats_rows(state)
        if rows:
            _await_second_sample()
        print_rows(rows, fmt)
        return 0
    if verb == "run":
        return docker_run.run(rest, host_dir)
    if verb == "exec":
        return docker_run.exec_(rest, host_dir, find_container)
    if verb == "pull":
        return docker_pull.pull(rest, host_dir)
    if verb == "build" or (verb == "buildx" and rest[:1] == ["build"]):
        return docker_build.build(rest[1:] if verb == "buildx" else rest, host_dir)
    if verb == "rmi":
        return docker_rmi.rmi(rest, host_dir)
    if verb == "save":
        return docker_archive.save(rest, host_dir)
    if verb == "load":
        return docker_archive.load(rest, host_dir)
    if verb in ("stop", "rm", "start", "restart", "kill"):
        return _lifecycle("stop" if verb == "kill" else verb, rest, host_dir)
    return err_line(f"docker: '{verb}' is not simulated on this host.\nSee 'docker --help'")
