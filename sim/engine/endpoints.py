"""Keeps one OpenAIServer per engine the hosts' state says is serving, and tells the hosts.

The fake `vllm serve` writes a `serve` record into its container's state; this watcher (in the
simulator's process) starts a server for it, writes HOST_DIR/engine/endpoints.json (served port →
real loopback port, read by the fake `curl`), and closes the server when the container stops.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
from pathlib import Path
from typing import Any

from ..fakehost.latency_effects import memory_path
from ..fakehost.procs import log_path
from .openai_server import OpenAIServer, ServedModel

POLL_S = 0.1
ENDPOINTS_FILE = Path("engine") / "endpoints.json"


def serving_records(state: dict[str, Any]) -> dict[int, dict[str, Any]]:
    """Served port → `serve` record, for every running container with a started API server
    whose process still lives: an engine that died inside a running container (its main process
    is `sleep infinity`, the server a `docker exec`) serves nothing (sim/SOURCES.md)."""
    found = {}
    for c in state["docker"]["containers"].values():
        record = c.get("serve") or {}
        if c["state"] == "running" and record.get("role") == "api" and _alive(record.get("pid")):
            found[int(record["port"])] = {**record, "container_id": c["id"]}
    return found


def _alive(pid: object) -> bool:
    """Whether the server's process exists (a record without a pid is taken as alive)."""
    if not isinstance(pid, int):
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # it exists, under another user
        return True
    return True


class Endpoints:
    """`await refresh()` matches servers to the state; `start()` repeats it every POLL_S."""

    def __init__(self, host_dirs: dict[str, Path]) -> None:
        self._host_dirs = host_dirs
        self._servers: dict[tuple[str, int], tuple[str, OpenAIServer]] = {}
        self._task: asyncio.Task[None] | None = None
        self._lock = asyncio.Lock()

    def start(self) -> None:
        self._task = asyncio.get_running_loop().create_task(self._poll())

    async def close(self) -> None:
        if self._task:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task
        for _key, server in self._servers.values():
            await server.close()
        self._servers.clear()

    def port_for(self, host: str, served_port: int) -> int | None:
        """The real loopback port behind `served_port` on `host`, if an engine serves there."""
        entry = self._servers.get((host, served_port))
        return entry[1].port if entry else None

    async def _poll(self) -> None:
        while True:
            await self.refresh()
            await asyncio.sleep(POLL_S)

    async def refresh(self) -> None:
        async with self._lock:
            for host, host_dir in self._host_dirs.items():
                try:
                    state = json.loads((host_dir / "state.json").read_text())
                except (OSError, ValueError):
                    continue
                if await self._sync(host, host_dir, serving_records(state)):
                    self._publish(host, host_dir)

    async def _sync(self, host: str, host_dir: Path, wanted: dict[int, dict[str, Any]]) -> bool:
        changed = False
        for (name, port), (key, server) in list(self._servers.items()):
            record = wanted.get(port) if name == host else None
            if name == host and (record is None or _key(record) != key):
                del self._servers[(name, port)]
                await server.close()
                changed = True
        for port, record in wanted.items():
            if (host, port) not in self._servers:
                memory = memory_path(host_dir, record["container_id"], record.get("pid"))
                log = log_path(host_dir, record["container_id"])
                server = OpenAIServer(ServedModel.from_record(record, memory), log)
                await server.start()
                self._servers[(host, port)] = (_key(record), server)
                changed = True
        return changed

    def _publish(self, host: str, host_dir: Path) -> None:
        ports = {str(p): s.port for (name, p), (_k, s) in self._servers.items() if name == host}
        path = host_dir / ENDPOINTS_FILE
        path.parent.mkdir(exist_ok=True)
        tmp = path.with_suffix(f".{os.getpid()}.tmp")
        tmp.write_text(json.dumps(ports))
        os.replace(tmp, path)


def _key(record: dict[str, Any]) -> str:
    return f"{record['container_id']}:{record.get('pid')}:{record['model']}:{record['tok_s']}"
