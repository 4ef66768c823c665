"""endpoint_check through a real SSH port forward to the simulated engine's OpenAI-compatible server
(its generation checks against a dead engine core and a context that fails when used), and the
model-size lookup through the real WebFetcher against a local Hub stand-in."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from agent.world.model import WorldModel
from sim.engine.openai_server import OpenAIServer, ServedModel
from sim.engine.pacing import Pace
from tests.support.asyncssh_hosts import LocalHosts
from tools.base import ToolContext
from tools.deploy.plan.fit import HubWeights, size_from_hub
from tools.deploy.rollout.state import SessionState
from tools.endpoint_check import EndpointCheckInput, EndpointCheckTool
from tools.ssh import SSHPool
from tools.web import WebFetcher, WebSettings

MODEL = "Qwen/Qwen3.5-122B-A10B-FP8"
TOKENS = 12


class FakeEngine:
    """An engine still loading (/health 503) or listing another model: the sim's server is
    always ready, so these two answers come from this stand-in."""

    def __init__(self, healthy: bool = True) -> None:
        self.healthy = healthy
        self.requests: list[str] = []
        self.server: asyncio.Server | None = None

    async def start(self) -> int:
        self.server = await asyncio.start_server(self._handle, "127.0.0.1", 0)
        return self.server.sockets[0].getsockname()[1]

    async def stop(self) -> None:
        assert self.server is not None
        self.server.close()
        await self.server.wait_closed()

    async def _handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        head = await reader.readuntil(b"\r\n\r\n")
        lines = head.decode().split("\r\n")
        method, path, _ = lines[0].split(" ", 2)
        headers = dict(line.split(": ", 1) for line in lines[1:] if ": " in line)
        length = int(headers.get("content-length", headers.get("Content-Length", "0")))
        await reader.readexactly(length)  # the body: these two answers need none of it
        self.requests.append(f"{method} {path}")
        if path == "/health":
            await self._reply(writer, 200 if self.healthy else 503, b"")
        elif path == "/v1/models":
            await self._reply(writer, 200, json.dumps({"data": [{"id": MODEL}]}).encode())
        else:
            await self._reply(writer, 404, b"{}")
        writer.close()

    async def _reply(self, writer: asyncio.StreamWriter, status: int, body: bytes) -> None:
        writer.write(
            f"HTTP/1.1 {status} X\r\nContent-Type: application/json\r\n"
            f"Content-Length: {len(body)}\r\nConnection: close\r\n\r\n".encode()
            + body
        )
        await writer.drain()


@pytest.fixture
async def head(tmp_path: Path) -> AsyncIterator[tuple[SSHPool, LocalHosts]]:
    hosts = LocalHosts(tmp_path)
    await hosts.add("spark-a")
    hosts.write_known_hosts("spark-a")
    pool = SSHPool(hosts.inventory())
    try:
        yield pool, hosts
    finally:
        await pool.close()
        await hosts.close()


def served(**knobs: object) -> ServedModel:
    """The simulated engine's model: small context and fast tokens keep a test cheap."""
    settings: dict = {"tool_parser": "qwen3_coder", "max_model_len": 4096} | knobs
    return ServedModel(MODEL, MODEL, pace=Pace(tok_s=2000.0, ttft_s=0.001), **settings)


async def check(pool: SSHPool, tmp_path: Path, engine: OpenAIServer, **inputs: object):
    port = await engine.start()
    world = WorldModel()
    try:
        params = EndpointCheckInput(host="spark-a", port=port, **inputs)
        ctx = ToolContext(spill_dir=tmp_path / "spill", world=world)
        return await EndpointCheckTool(SessionState(), pool).run(params, ctx), world, port
    finally:
        await engine.close()


@pytest.mark.slow
async def test_endpoint_check_through_a_port_forward(head, tmp_path: Path) -> None:
    """No rollout of this session serves the port: no container to run the engine's benchmark
    in, so Scout's own streams measure, and the report says so."""
    pool, hosts = head
    result, world, port = await check(
        pool, tmp_path, OpenAIServer(served()), concurrency=[3, 1], output_len=TOKENS
    )
    assert not result.is_error, result.text
    headline, source = result.text.splitlines()[:2]
    assert headline.startswith(
        f"health ok · model {MODEL} · answer checked · tool call: round-trip ok · "
        "needle found at ~3,481 tokens · quick sweep: single stream "
    )
    assert headline.endswith(" tok/s aggregate") and " · 3 streams " in headline
    assert source.startswith(
        "proof: Scout's own streams, not the engine's benchmark — no engine this session "
        "started serves this port"
    )
    data = result.data
    assert data["models"] == [MODEL] and data["generation"]["answer"] == "cobalt-7319"
    rows = data["report"]["rows"]
    assert [r["concurrency"] for r in rows] == [1, 3]  # the sweep, sorted
    assert all(r["tok_s_per_user"] > 0 and r["ttft_ms"]["p50"] is not None for r in rows)
    assert rows[1]["tok_s_aggregate"] > 0 and rows[1]["goodput_req_s"] is None
    assert data["report"]["goodput_targets_ms"] == {}  # no goodput without the benchmark
    chart, saved = Path(data["files"]["chart"]), Path(data["files"]["json"])
    assert chart.parent == tmp_path and "<svg" in chart.read_text()
    assert json.loads(saved.read_text())["fingerprint"]["serve_command"] == "unknown"
    assert hosts.hosts["spark-a"].tunnels >= 1  # the traffic went through SSH
    endpoint = world.endpoints[f"spark-a:{port}"]
    assert endpoint.model == MODEL and endpoint.concurrency == 3
    assert endpoint.single_stream_tok_s == round(rows[0]["tok_s_per_user"], 2)
    assert endpoint.aggregate_tok_s == round(rows[1]["tok_s_aggregate"], 2)


@pytest.mark.slow
async def test_without_a_tool_parser_the_tool_call_is_not_tried(head, tmp_path: Path) -> None:
    pool, _ = head
    result, _, _ = await check(
        pool, tmp_path, OpenAIServer(served(tool_parser="")), concurrency=[1], output_len=8
    )
    assert not result.is_error, result.text
    assert result.data["generation"]["tool_call"] == "not tried (no --tool-call-parser)"


async def test_dead_generation_behind_a_healthy_model_list_is_caught(head, tmp_path) -> None:
    pool, _ = head
    result, world, port = await check(
        pool,
        tmp_path,
        OpenAIServer(served(dead=True)),
        generation_timeout_s=0.5,
        concurrency=[1],
        output_len=8,
    )
    assert result.is_error and world.endpoints == {}
    assert result.text.startswith(
        f"a one-line question on spark-a:{port} did not finish in 0.5 s though /health and "
        "/v1/models answer"
    )


async def test_a_context_length_that_fails_when_used_is_caught(head, tmp_path: Path) -> None:
    pool, _ = head
    result, world, port = await check(
        pool, tmp_path, OpenAIServer(served(recall_tokens=2000)), concurrency=[1], output_len=8
    )
    assert result.is_error and world.endpoints == {}
    assert result.text.startswith(
        f"a fact placed in a 3,481-token prompt (--max-model-len 4,096) on spark-a:{port} was "
        "not found"
    )


async def test_unhealthy_engine_says_it_is_still_loading(head, tmp_path: Path) -> None:
    pool, _ = head
    engine = FakeEngine(healthy=False)
    port = await engine.start()
    try:
        params = EndpointCheckInput(host="spark-a", port=port)
        world = WorldModel()
        ctx = ToolContext(spill_dir=tmp_path, world=world)
        result = await EndpointCheckTool(SessionState(), pool).run(params, ctx)
    finally:
        await engine.stop()
    assert result.is_error and world.endpoints == {}  # a failed check is not recorded
    assert result.text.startswith(f"GET /health on spark-a:{port} answered 503")
    assert "may still be loading weights" in result.text


async def test_wrong_model_lists_what_is_served(head, tmp_path: Path) -> None:
    pool, _ = head
    engine = FakeEngine()
    port = await engine.start()
    try:
        params = EndpointCheckInput(host="spark-a", port=port, model="other/model")
        result = await EndpointCheckTool(SessionState(), pool).run(
            params, ToolContext(spill_dir=tmp_path)
        )
    finally:
        await engine.stop()
    assert result.text == f"spark-a:{port} does not serve other/model; /v1/models lists: {MODEL}"


async def _hub(routes: dict[str, bytes]) -> tuple[asyncio.Server, str]:
    async def handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        request = (await reader.readuntil(b"\r\n\r\n")).decode().split(" ")[1]
        body = routes.get(request)
        status = "200 OK" if body is not None else "404 Not Found"
        body = body or b"{}"
        writer.write(
            f"HTTP/1.1 {status}\r\nContent-Type: application/json\r\nContent-Length: {len(body)}"
            f"\r\nConnection: close\r\n\r\n".encode()
            + body
        )
        await writer.drain()
        writer.close()

    server = await asyncio.start_server(handle, "127.0.0.1", 0)
    return server, f"http://127.0.0.1:{server.sockets[0].getsockname()[1]}"


async def test_model_size_and_revision_from_the_hub_api_then_the_index_file() -> None:
    sha = "9c1e2d3f4a5b6c7d8e9f0a1b2c3d4e5f6a7b8c9d"
    siblings = [
        {"rfilename": "model-00001-of-00002.safetensors", "size": 60_000_000_000},
        {"rfilename": "model-00002-of-00002.safetensors", "size": 59_000_000_000},
        {"rfilename": "config.json", "size": 4_000},
    ]
    index = {"metadata": {"total_size": 118_900_000_000}}
    server, base = await _hub(
        {
            f"/api/models/{MODEL}?blobs=true": json.dumps(
                {"sha": sha, "siblings": siblings}
            ).encode(),
            "/other/model/resolve/main/model.safetensors.index.json": json.dumps(index).encode(),
        }
    )
    try:
        async with WebFetcher(WebSettings(allowed_hosts=("127.0.0.1",))) as fetcher:

            async def fetch(url: str) -> bytes:
                download = await fetcher.fetch(url)
                if download.status != 200:
                    raise RuntimeError(f"{url} answered {download.status}")
                return download.body

            assert await size_from_hub(MODEL, fetch, hub_url=base) == HubWeights(
                119_000_000_000, sha
            )
            # the index file says nothing of the commit: the revision stays unknown
            assert await size_from_hub("other/model", fetch, hub_url=base) == HubWeights(
                118_900_000_000, None
            )
    finally:
        server.close()
        await server.wait_closed()
