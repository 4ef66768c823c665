"""How long the engine took to come up, timed as sparkrun times it: port open, HTTP ready and the
first streamed token, each from its container's start (sparkrun docs/STARTUP_READINESS.md: a
model counts as ready only once a streamed request returns its first token).

While the serve step waits for its log's `ready`, Scout asks the head every READY_POLL_S, in one
read-only line, for the host's clock, the container's start and what `/health` answers; once it
answers 200, a streamed one-token completion is sent and the host's clock read as its first
chunk arrives. The host's own clock is used throughout, so no skew enters. A serve step that
runs its engine with `docker exec` in a container started earlier is timed from its own start
instead, and says so. The times are as fine as the poll.
"""

from __future__ import annotations

import asyncio
import json
import re
import shlex
from dataclasses import asdict, dataclass

from tools.deploy.proof.fingerprint import container_of, port_of
from tools.deploy.steps import DeployStep
from tools.ssh.errors import SSHError
from tools.ssh.pool import SSHPool

READY_POLL_S = 0.5
TOKEN_TIMEOUT_S = 120
NOT_CONNECTED = {"7"}  # curl: couldn't connect (nothing listens); anything else reached a listener


@dataclass
class Readiness:
    """Seconds from `since` to each mark; None where it was not reached while Scout watched."""

    since: str  # "the container's start" or "the serve step's start"
    port_open_s: float | None = None
    http_ready_s: float | None = None
    first_token_s: float | None = None

    def line(self) -> str:
        def said(value: float | None) -> str:
            return f"{value:.1f} s" if value is not None else "not reached"

        return (
            f"readiness from {self.since}: port open {said(self.port_open_s)}, HTTP ready "
            f"{said(self.http_ready_s)}, first streamed token {said(self.first_token_s)}"
        )

    def data(self) -> dict[str, object]:
        return asdict(self)


@dataclass(frozen=True)
class Serving:
    """What a serve step starts: its port, the model name it serves, its container, and whether
    it runs by `docker exec` in a container started before it."""

    port: int
    model: str
    container: str | None
    exec_in: bool


def serving(step: DeployStep) -> Serving | None:
    """The API server a serve step starts; None for a headless rank or any other step."""
    command = step.actions[0] if step.actions else ""
    if step.kind != "serve" or "--headless" in command:
        return None
    try:
        words = shlex.split(command)
    except ValueError:
        return None
    if "serve" in words[:-1]:
        model = words[words.index("serve") + 1]
    elif "--model-path" in words[:-1]:
        model = words[words.index("--model-path") + 1]
    else:
        return None
    if "--served-model-name" in words[:-1]:
        model = words[words.index("--served-model-name") + 1]
    return Serving(port_of(command), model, container_of(words), words[:2] == ["docker", "exec"])


def probe_command(container: str | None, port: int) -> str:
    """The host's clock, the container's start (epoch), curl's exit and /health's status."""
    start = ""
    if container:
        fmt = "'{{.State.StartedAt}}'"
        start = (
            f"s=$(docker inspect --format {fmt} {shlex.quote(container)} 2>/dev/null); "
            'echo "start $(date -d "$s" +%s.%N 2>/dev/null)"; '
        )
    return (
        f'{start}echo "now $(date +%s.%N)"; '
        f"c=$(curl -s -o /dev/null -m 2 -w '%{{http_code}}' http://127.0.0.1:{port}/health); "
        'echo "health $? $c"'
    )


def token_command(port: int, model: str) -> str:
    """A streamed one-token completion; the host's clock when its first `data:` line arrives."""
    body = json.dumps({"model": model, "prompt": "Hello", "max_tokens": 1, "stream": True})
    return (
        f"curl -sN -m {TOKEN_TIMEOUT_S} -H 'Content-Type: application/json' "
        f"-d {shlex.quote(body)} http://127.0.0.1:{port}/v1/completions | "
        '{ while read -r l; do case $l in data:*) echo "token $(date +%s.%N)"; exit 0;; esac; '
        'done; echo "token none"; }'
    )


def _field(text: str, name: str) -> list[str]:
    found = re.search(rf"^{name}\b(.*)$", text, re.M)
    return found.group(1).split() if found else []


def _epoch(words: list[str]) -> float | None:
    try:
        return float(words[0]) if words else None
    except ValueError:
        return None


def origin(serve: Serving) -> Readiness:
    """Nothing reached yet, timed from the container's start, or from the step's own where the
    engine runs by `docker exec` in a container started before it."""
    return Readiness("the serve step's start" if serve.exec_in else "the container's start")


async def time_readiness(pool: SSHPool, host: str, serve: Serving, readiness: Readiness) -> None:
    """Fill `readiness` as each mark is reached, until the first token arrived (cancel it to
    stop: what it reached stays)."""
    exec_in, container, port, model = serve.exec_in, serve.container, serve.port, serve.model
    start: float | None = None
    while readiness.first_token_s is None:
        try:
            read = await pool.run(host, probe_command(None if exec_in else container, port),
                                  timeout=30)  # fmt: skip
        except SSHError:
            await asyncio.sleep(READY_POLL_S)
            continue
        now = _epoch(_field(read.stdout, "now"))
        start = start or _epoch(_field(read.stdout, "start")) or now
        health = _field(read.stdout, "health")
        if now is None or start is None or not health:
            await asyncio.sleep(READY_POLL_S)
            continue
        if readiness.port_open_s is None and health[0] not in NOT_CONNECTED:
            readiness.port_open_s = max(0.0, now - start)
        if readiness.http_ready_s is None and health[1:] == ["200"]:
            readiness.http_ready_s = max(0.0, now - start)
            readiness.port_open_s = readiness.port_open_s or readiness.http_ready_s
        if readiness.http_ready_s is not None:
            try:
                sent = await pool.run(host, token_command(port, model),
                                      timeout=TOKEN_TIMEOUT_S + 30)  # fmt: skip
            except SSHError:
                continue
            if (arrived := _epoch(_field(sent.stdout, "token"))) is not None:
                readiness.first_token_s = max(0.0, arrived - start)
                break
        await asyncio.sleep(READY_POLL_S)
