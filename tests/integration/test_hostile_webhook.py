"""Hostile webhook answers and callbacks, on loopback servers: each ends in a clear denial or a
clean HTTP error, memory stays bounded, the event loop keeps ticking, and only a signed answer
for exactly this request (its id and fingerprint) is ever taken as a decision."""

from __future__ import annotations

import asyncio
import contextlib
import gzip
import io
import json
import socket
import socketserver
import threading
import time
import tracemalloc
from collections.abc import Callable, Iterator

import httpx
import pytest
from structlog.testing import capture_logs

from agent.faces.headless import EXIT_ERROR, run_goal
from agent.runtime.settings import Settings
from agent.safety.approvers import webhook
from agent.safety.approvers.signing import signature
from agent.safety.approvers.webhook import WebhookApprover
from tests.support.example_receiver import receiver, serving
from tests.support.hostile import Heartbeat
from tests.support.loop_clock import movable_clock
from tests.support.webhook_kit import (
    SECRET,
    ScriptedReceiver,
    answer_for,
    make_request,
    signed,
)

GB = 1024**3
MB = 1024**2


@contextlib.contextmanager
def raw_server(reply: Callable[[socket.socket, threading.Event], None]) -> Iterator[str]:
    """A TCP server on loopback that reads a request's head and then lets `reply` write
    whatever it likes on the socket (until the client hangs up or the test ends)."""
    stop = threading.Event()

    class Handler(socketserver.BaseRequestHandler):
        def handle(self) -> None:
            self.request.settimeout(30)
            head = b""
            while b"\r\n\r\n" not in head:
                chunk = self.request.recv(65536)
                if not chunk:
                    return
                head += chunk
            with contextlib.suppress(OSError):  # the client stops reading: that is the point
                reply(self.request, stop)

    class Server(socketserver.ThreadingTCPServer):
        daemon_threads = True
        allow_reuse_address = True

    server = Server(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, args=(0.05,), daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/hook"
    finally:
        stop.set()
        server.shutdown()
        server.server_close()
        thread.join(timeout=10)


def endless_body(declared: int | None) -> Callable[[socket.socket, threading.Event], None]:
    def reply(conn: socket.socket, stop: threading.Event) -> None:
        length = f"Content-Length: {declared}\r\n" if declared is not None else ""
        conn.sendall(f"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n{length}\r\n".encode())
        block = b"x" * 65536
        for _ in range(GB // len(block)):
            if stop.is_set():
                return
            conn.sendall(block)

    return reply


@pytest.mark.parametrize("declared", [None, GB], ids=["undeclared", "declared"])
async def test_a_gigabyte_answer_is_refused_unread_with_bounded_memory(declared) -> None:
    tracemalloc.start()
    try:
        with raw_server(endless_body(declared)) as url:
            async with Heartbeat() as beat, WebhookApprover(url, SECRET) as approver:
                decision = await approver.decide(make_request())
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()

    assert decision.kind == "unavailable" and not decision.allows
    assert "approval webhook answer rejected (the answer is over 65536 bytes" in decision.message
    assert decision.message.endswith("denied — nothing runs without an approval")
    assert peak < 16 * MB  # a 1 GB answer used to be buffered whole (2.4 GB RSS)
    beat.assert_kept_ticking()


async def test_an_answer_body_that_trickles_is_cut_off(monkeypatch) -> None:
    monkeypatch.setattr(webhook, "BODY_READ_TIMEOUT_S", 0.5)

    def trickle(conn: socket.socket, stop: threading.Event) -> None:
        conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Length: 1000\r\n\r\n")
        while not stop.wait(0.1):
            conn.sendall(b" ")

    with raw_server(trickle) as url:
        async with Heartbeat() as beat, WebhookApprover(url, SECRET) as approver:
            decision = await approver.decide(make_request())

    assert decision.kind == "unavailable"
    assert "the answer's body did not arrive within 0.5 s" in decision.message
    beat.assert_kept_ticking()


async def test_a_compressed_answer_is_not_inflated() -> None:
    request = make_request()
    body = gzip.compress(answer_for(request) + b" " * 10_000_000)
    headers = {**signed(body), "Content-Encoding": "gzip"}
    script = ScriptedReceiver(lambda _seen: (200, headers, body))
    with serving(script.server()) as url:
        async with WebhookApprover(url, SECRET) as approver:
            decision = await approver.decide(request)

    assert decision.kind == "unavailable"
    assert "the answer is compressed (gzip); answer uncompressed" in decision.message
    assert script.seen[0].headers["Accept-Encoding"] == "identity"


def test_plain_http_to_another_host_needs_the_operator_to_opt_in() -> None:
    with pytest.raises(ValueError, match="uses plain http: anyone on the path can read"):
        WebhookApprover("http://192.0.2.10/hook", SECRET)
    with capture_logs() as logs:
        WebhookApprover("http://192.0.2.10/hook", SECRET, allow_insecure_http=True)
    assert any(entry["event"] == "approval webhook over plain http" for entry in logs)
    for fine in ("https://192.0.2.10/hook", "http://127.0.0.1:9/hook", "http://localhost:9/"):
        WebhookApprover(fine, SECRET)


async def test_scout_run_explains_the_plain_http_refusal(tmp_path) -> None:
    settings = Settings(
        api_key="test",
        transcripts_dir=tmp_path / "t",
        log_file=tmp_path / "scout.log",
    )
    err = io.StringIO()
    code = await run_goal(
        settings,
        "anything",
        approvals="webhook",
        webhook_url="http://192.0.2.10/hook",
        webhook_secret=SECRET,
        err=err,
    )
    assert code == EXIT_ERROR
    assert "uses plain http" in err.getvalue() and "--webhook-allow-http" in err.getvalue()


async def post_callback(url: str, body: bytes, headers: dict[str, str]) -> httpx.Response:
    async with httpx.AsyncClient(trust_env=False) as client:
        return await client.post(url, content=body, headers=headers)


async def test_decision_url_needs_a_signed_202_on_the_webhooks_own_origin() -> None:
    request = make_request()
    elsewhere = ScriptedReceiver(lambda _seen: (200, {}, b"{}"))
    with serving(elsewhere.server()) as other_url:
        cases = {
            "unsigned": (json.dumps({"decision_url": "/poll"}).encode(), False),
            "other origin": (json.dumps({"decision_url": other_url}).encode(), True),
        }
        for name, (later, sign_it) in cases.items():
            script = ScriptedReceiver(
                lambda seen, later=later, sign_it=sign_it: (
                    (202, signed(later) if sign_it else {}, later)
                    if seen.method == "POST"
                    else (500, {}, b"")
                )
            )
            with serving(script.server()) as url:
                async with WebhookApprover(
                    url, SECRET, timeout_s=30, poll_interval_s=0.01
                ) as approver:
                    pending = asyncio.create_task(approver.decide(request))
                    await script.wait_for_request(1)
                    await asyncio.sleep(0.2)  # time for polls, were any to be sent
                    answer = answer_for(request, "denied", message=name)
                    callback = approver.callback_url(request.id)
                    accepted = await post_callback(callback, answer, signed(answer))
                    decision = await pending
            assert accepted.status_code == 204, name
            assert decision.kind == "denied" and decision.message == name
            assert [seen.method for seen in script.seen] == ["POST"], name  # never polled
    assert elsewhere.seen == []  # signed headers and the request id never went elsewhere


async def test_a_signed_answer_must_name_this_request() -> None:
    request = make_request(request_id="toolu_new")
    earlier = make_request(request_id="toolu_old")  # same call, asked before a restart
    bodies = {
        "no id": json.dumps({"fingerprint": request.fingerprint, "decision": "approved"}).encode(),
        "another id": answer_for(earlier),
    }
    for name, body in bodies.items():
        script = ScriptedReceiver(lambda _seen, body=body: (200, signed(body), body))
        with serving(script.server()) as url:
            async with WebhookApprover(url, SECRET) as approver:
                decision = await approver.decide(request)
        assert decision.kind == "unavailable" and not decision.allows, name
        assert "not 'toolu_new' (an answer must carry the id" in decision.message, name


async def test_duplicate_keys_are_rejected_not_resolved() -> None:
    request = make_request()
    body = (
        f'{{"id": "{request.id}", "fingerprint": "{request.fingerprint}", '
        '"decision": "denied", "decision": "approved"}'
    ).encode()
    script = ScriptedReceiver(lambda _seen: (200, signed(body), body))
    with serving(script.server()) as url:
        async with WebhookApprover(url, SECRET) as approver:
            decision = await approver.decide(request)
    assert decision.kind == "unavailable" and not decision.allows
    assert "ambiguous JSON (key 'decision' appears more than once)" in decision.message


async def test_callbacks_for_unknown_requests_burn_nothing() -> None:
    request = make_request()
    script = ScriptedReceiver(lambda _seen: (202, {}, b""))
    genuine = answer_for(request, "approved", message="the real one")
    headers = signed(genuine)
    other = make_request(request_id="toolu_other")
    for_other = answer_for(other)
    with serving(script.server()) as url:
        async with WebhookApprover(url, SECRET, timeout_s=30) as approver:
            callback = approver.callback_url(request.id)
            early = await post_callback(callback, genuine, headers)  # nobody is waiting yet
            pending = asyncio.create_task(approver.decide(request))
            await script.wait_for_request(1)
            elsewhere = await post_callback(
                approver.callback_url("toolu_unknown"), genuine, headers
            )
            wrong_step = await post_callback(callback, for_other, signed(for_other))
            accepted = await post_callback(callback, genuine, headers)
            replayed = await post_callback(callback, genuine, headers)
            decision = await pending

    assert [r.status_code for r in (early, elsewhere, wrong_step, accepted, replayed)] == [
        404,
        404,
        422,
        204,
        404,  # the step has its decision; the genuine delivery was used exactly once
    ]
    assert decision.kind == "approved" and decision.message == "the real one"


async def raw_exchange(url: str, head: str) -> str:
    """Send `head` as it is (httpx refuses such requests) and read the whole reply."""
    target = httpx.URL(url)
    reader, writer = await asyncio.open_connection(target.host, target.port)
    try:
        writer.write(head.encode())
        await writer.drain()
        return (await reader.read()).decode()
    finally:
        writer.close()


async def test_a_70_kb_header_line_gets_431_and_the_listener_keeps_working() -> None:
    request = make_request()
    script = ScriptedReceiver(lambda _seen: (202, {}, b""))
    with serving(script.server()) as url:
        async with WebhookApprover(url, SECRET, timeout_s=30) as approver:
            pending = asyncio.create_task(approver.decide(request))
            await script.wait_for_request(1)
            callback = approver.callback_url(request.id)
            path = httpx.URL(callback).path
            huge = await raw_exchange(
                callback, f"POST {path} HTTP/1.1\r\nX-Filler: {'a' * 70_000}\r\n\r\n"
            )
            long_path = await raw_exchange(callback, f"POST {path}{'x' * 70_000} HTTP/1.1\r\n\r\n")
            answer = answer_for(request, "denied", message="still listening")
            accepted = await post_callback(callback, answer, signed(answer))
            decision = await pending

    assert huge.startswith("HTTP/1.1 431 Request Header Fields Too Large\r\n")
    assert huge.endswith("header line longer than 16384 bytes")
    assert long_path.startswith("HTTP/1.1 414 URI Too Long\r\n")
    assert accepted.status_code == 204 and decision.message == "still listening"


async def test_zero_padded_timestamps_are_not_a_new_message(tmp_path) -> None:
    request = make_request()
    script = ScriptedReceiver(lambda _seen: (202, {}, b""))
    answer = answer_for(request, "approved")
    now = int(time.time())
    padded = {
        "X-Scout-Timestamp": f"0{now}",
        "X-Scout-Signature-256": signature(SECRET.encode(), now, answer),
    }
    with serving(script.server()) as url, movable_clock() as forward:
        async with WebhookApprover(url, SECRET, timeout_s=300) as approver:
            pending = asyncio.create_task(approver.decide(request))
            await script.wait_for_request(1)
            rejected = await post_callback(approver.callback_url(request.id), answer, padded)
            forward(300)  # the timeout comes once the answer was rejected, however slowly
            decision = await pending
    assert rejected.status_code == 401 and "malformed X-Scout-Timestamp" in rejected.text
    assert decision.kind == "timed_out"

    # the example receiver: a captured request, replayed with its timestamp respelled
    decider = receiver.RulesDecider([{"tool": "*"}], [], source="test")
    server = receiver.make_server("127.0.0.1", 0, SECRET.encode(), decider, log=io.StringIO())
    body = json.dumps({"type": "approval_request", **request.model_dump()}).encode()
    first = signed(body)
    respelled = {**first, "X-Scout-Timestamp": "0" + first["X-Scout-Timestamp"]}
    with serving(server) as hook:
        async with httpx.AsyncClient(trust_env=False) as client:
            once = await client.post(hook, content=body, headers=first)
            again = await client.post(hook, content=body, headers=respelled)
    assert once.status_code == 200
    assert again.status_code == 401 and "malformed timestamp" in again.text
