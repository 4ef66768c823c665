"""`scout status`: each recorded deployment as its hosts and its endpoint show it now.

One round over the hosts (the recorded containers by `docker ps`, image IDs by `docker images`,
the reads `scout recon` runs too) and one real short generation through a port forward to the
serving host: a server that answers /health but cannot generate is not serving. The state is the
first that holds, in this order:
- `unknown`: a host could not be read, so nothing can be said of it;
- `gone`: a container the record names is not on its host;
- `stopped`: it is there but not running;
- `degraded`: every container runs, but the endpoint does not generate;
- `drifted`: it generates, but not what was proven (another image ID, image or model);
- `serving`: what was proven is what runs, and it answers.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import Literal

import httpx

from agent.runtime.deployment_record import DeploymentRecord, RecordStore
from tools.deployment_status import StatusReader
from tools.ssh.errors import SSHError
from tools.ssh.pool import SSHPool

State = Literal["serving", "drifted", "degraded", "stopped", "gone", "unknown"]
EXIT_CODES: dict[State, int] = {
    "serving": 0, "drifted": 1, "degraded": 2, "stopped": 3, "gone": 4, "unknown": 5,
}  # fmt: skip
PS = "docker ps -a --no-trunc --format '{{json .}}'"
IMAGES = "docker images --format '{{json .}}'"
READ_TIMEOUT_S = 30.0
GENERATION_TIMEOUT_S = 120.0


@dataclass
class HostReading:
    """What one host's docker said: containers by name (state, image), image IDs by reference."""

    containers: dict[str, tuple[str, str]] = field(default_factory=dict)
    image_ids: dict[str, str] = field(default_factory=dict)
    problem: str | None = None


@dataclass
class DeploymentStatus:
    record: DeploymentRecord
    state: State
    reasons: list[str]
    answer: str | None = None

    @property
    def exit_code(self) -> int:
        return EXIT_CODES[self.state]

    def as_json(self) -> dict[str, object]:
        return {
            "id": self.record.id,
            "model": self.record.model,
            "endpoint": self.record.endpoint,
            "state": self.state,
            "reasons": self.reasons,
            "answer": self.answer,
            "recorded_at": self.record.recorded_at.isoformat(),
        }


async def deployment_status(record: DeploymentRecord, pool: SSHPool) -> DeploymentStatus:
    """The deployment's state now: its hosts read at once, then one generation if they run it."""
    hosts = record.hosts()
    readings = dict(zip(hosts, await asyncio.gather(*(_read(pool, h) for h in hosts)), strict=True))
    unread = [f"{h}: {r.problem}" for h, r in readings.items() if r.problem]
    if unread:
        return DeploymentStatus(record, "unknown", unread)
    missing, stopped, drift = [], [], []
    for started in record.started:
        found = readings[started.host].containers.get(started.container)
        if found is None:
            missing.append(f"{started.container} is not on {started.host}")
        elif found[0] != "running":
            stopped.append(f"{started.container} on {started.host} is {found[0]}")
        else:
            drift += _image_drift(record, started.host, found[1], readings[started.host])
    if missing:
        return DeploymentStatus(record, "gone", missing + stopped)
    if stopped:
        return DeploymentStatus(record, "stopped", stopped)
    answer, served, problem = await _generate(record, pool)
    if problem is not None:
        return DeploymentStatus(record, "degraded", [problem])
    if served and served != record.model:
        drift.append(f"the endpoint serves {served}, not {record.model}")
    if drift:
        return DeploymentStatus(record, "drifted", drift, answer)
    return DeploymentStatus(record, "serving", [], answer)


async def _read(pool: SSHPool, host: str) -> HostReading:
    try:
        ps, images = await asyncio.gather(
            pool.run(host, PS, timeout=READ_TIMEOUT_S),
            pool.run(host, IMAGES, timeout=READ_TIMEOUT_S),
        )
    except (SSHError, OSError) as exc:
        return HostReading(problem=f"cannot read it: {exc}")
    for result in (ps, images):
        if result.exit_status != 0:
            said = (result.stderr or result.stdout).strip().splitlines()
            reason = said[-1] if said else f"exit status {result.exit_status}"
            return HostReading(problem=f"`{result.command}` failed: {reason}")
    reading = HostReading()
    for row in _json_lines(ps.stdout):
        reading.containers[str(row.get("Names", ""))] = (
            str(row.get("State", "")),
            str(row.get("Image", "")),
        )
    for row in _json_lines(images.stdout):
        reference = f"{row.get('Repository', '')}:{row.get('Tag') or 'latest'}"
        reading.image_ids[reference] = str(row.get("ID", "")).removeprefix("sha256:")
    return reading


def _image_drift(
    record: DeploymentRecord, host: str, image: str, reading: HostReading
) -> list[str]:
    proven_image = record.fingerprint.get("image")
    proven_id = str(record.fingerprint.get("image_id") or "").removeprefix("sha256:")
    if proven_image and image != proven_image:
        return [f"{host} runs image {image}, proven with {proven_image}"]
    now_id = reading.image_ids.get(image if ":" in image else f"{image}:latest", "")
    if proven_id and proven_id != "unknown" and now_id and not _same_id(now_id, proven_id):
        return [f"{host}: image {image} is now {now_id[:12]}, proven as {proven_id[:12]}"]
    return []


def _same_id(one: str, other: str) -> bool:
    length = min(len(one), len(other))
    return length >= 12 and one[:length] == other[:length]


async def _generate(
    record: DeploymentRecord, pool: SSHPool
) -> tuple[str | None, str | None, str | None]:
    """(answer, model that answered, problem): a short chat completion through a port forward."""
    try:
        conn = await pool.connection(record.host)
        listener = await conn.forward_local_port("127.0.0.1", 0, "localhost", record.port)
    except (SSHError, OSError) as exc:
        return None, None, f"cannot forward a port to {record.endpoint}: {exc}"
    body = {
        "model": record.model,
        "messages": [{"role": "user", "content": "Reply with the single word: ready"}],
        "max_tokens": 64,
        # a reasoning model would spend a short budget thinking: vLLM and SGLang pass this to the
        # chat template (Qwen3's switch); any generated token, thought or said, counts below
        "chat_template_kwargs": {"enable_thinking": False},
    }
    url = f"http://127.0.0.1:{listener.get_port()}/v1/chat/completions"
    try:
        async with httpx.AsyncClient(timeout=GENERATION_TIMEOUT_S, trust_env=False) as http:
            reply = await http.post(url, json=body)
    except httpx.HTTPError as exc:
        return None, None, f"{record.endpoint} did not answer a generation: {exc!r}"
    finally:
        listener.close()
    if reply.status_code != 200:
        return None, None, f"{record.endpoint} answered a generation with HTTP {reply.status_code}"
    try:
        payload = reply.json()
        message = payload["choices"][0]["message"]
        answer = message.get("content") or message.get("reasoning_content") or ""
    except (ValueError, KeyError, IndexError, TypeError):
        return None, None, f"{record.endpoint} answered a generation without a completion"
    if not answer.strip():
        return None, None, f"{record.endpoint} generated nothing"
    return answer.strip()[:200], payload.get("model"), None


def _json_lines(text: str) -> list[dict[str, object]]:
    rows = []
    for line in text.splitlines():
        try:
            row = json.loads(line)
        except json.JSONDecodeError:
            continue
        if isinstance(row, dict):
            rows.append(row)
    return rows


async def recorded_statuses(
    folder: Path, pool: SSHPool, name: str | None
) -> tuple[list[dict[str, object]], list[str]]:
    """The status of every record in `folder` (or the one `name` picks) as data, and a line for
    each file or name that could not be read: the `deployment_status` tool's reader."""
    store = RecordStore(folder)
    records, problems = store.load()
    if name is not None:
        found = store.find(name)
        if isinstance(found, str):
            return [], [*problems, found]
        records = [found]
    statuses = await asyncio.gather(*(deployment_status(r, pool) for r in records))
    return [s.as_json() for s in statuses], problems


def deployment_reader(folder: Path) -> Callable[[SSHPool], StatusReader]:
    """The reader `open_runtime(deployments=…)` lends the `deployment_status` tool."""
    return lambda pool: partial(recorded_statuses, folder, pool)
