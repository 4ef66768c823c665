"""Webhook test parts: approval requests and signed answers, and a receiver whose every answer
is scripted (it records what Scout sent)."""

from __future__ import annotations

import asyncio
import json
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from agent.safety.approvals import ApprovalRequest, fingerprint
from tests.support.example_receiver import receiver

SECRET = "test-webhook-secret-5f1c0e-9b27d4a1e3c8f6"


def make_request(
    tool: str = "ssh_exec",
    tool_input: dict | None = None,
    risk: str = "read_only",
    request_id: str = "toolu_01",
) -> ApprovalRequest:
    tool_input = tool_input or {"host": "spark-head", "command": "nvidia-smi"}
    hosts = ["spark-head"]
    return ApprovalRequest(
        id=request_id,
        fingerprint=fingerprint(tool, tool_input, hosts),
        tool=tool,
        input=tool_input,
        hosts=hosts,
        risk=risk,
        reason=f"{tool} is {risk}",
        plan_step="1. check the GPUs",
        summary="nvidia-smi on spark-head",
    )


def answer_for(request: ApprovalRequest, decision: str = "approved", **extra) -> bytes:
    body = {
        "id": request.id,
        "fingerprint": request.fingerprint,
        "decision": decision,
        "decided_by": "ci",
        **extra,
    }
    return json.dumps(body).encode()


def signed(body: bytes, secret: str = SECRET, at: float | None = None) -> dict[str, str]:
    """Receiver-side signing, with the example's own code (an independent implementation)."""
    return receiver.signed_headers(secret.encode(), body, lambda: time.time() if at is None else at)


@dataclass
class Seen:
    method: str
    path: str
    headers: dict[str, str]
    body: bytes


Reply = tuple[int, dict[str, str], bytes]


@dataclass
class ScriptedReceiver:
    """A webhook whose every answer comes from `respond`; it records what Scout sent."""

    respond: Callable[[Seen], Reply]
    seen: list[Seen] = field(default_factory=list)
    arrived: threading.Event = field(default_factory=threading.Event)
    release: threading.Event = field(default_factory=threading.Event)

    def server(self) -> ThreadingHTTPServer:
        script = self

        class Handler(BaseHTTPRequestHandler):
            def _handle(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                seen = Seen(self.command, self.path, dict(self.headers), self.rfile.read(length))
                script.seen.append(seen)
                script.arrived.set()
                status, headers, body = script.respond(seen)
                self.send_response(status)
                for name, value in {**headers, "Content-Length": str(len(body))}.items():
                    self.send_header(name, value)
                self.end_headers()
                self.wfile.write(body)

            do_GET = do_POST = _handle

            def log_message(self, format, *args) -> None:
                pass

        return ThreadingHTTPServer(("127.0.0.1", 0), Handler)

    def payload(self, index: int = 0) -> dict:
        return json.loads(self.seen[index].body)

    async def wait_for_request(self, count: int) -> None:
        while len(self.seen) < count:
            self.arrived.clear()
            if len(self.seen) >= count:
                break
            await asyncio.to_thread(self.arrived.wait, 5)
