"""Scout's MCP server over Streamable HTTP, for a host agent on another machine.

The same server as on stdio (agent/mcp/server.py), served by the SDK's Streamable HTTP app
behind the specification's authorization: Scout is an OAuth resource server, every request
carries `Authorization: Bearer <token>`, and one without it, or with another token, gets 401
with the `WWW-Authenticate` challenge and the protected-resource metadata the SDK serves. The
token is the operator's, handed to the host out of band (a variable, never an argument: an
argument shows in `ps`); it is compared in constant time. The server binds loopback unless told
otherwise, and on loopback the SDK's DNS-rebinding guard checks Host and Origin.
"""

from __future__ import annotations

import hmac
import socket
import sys

import uvicorn
from mcp.server.auth.provider import AccessToken
from mcp.server.auth.settings import AuthSettings

from agent.mcp.bridge import ScoutBridge
from agent.mcp.server import build_server
from agent.mcp.url_approval import UrlApprovals

PATH = "/mcp"
SCOPE = "scout"
#: a shorter token is guessable; refuse it rather than serve behind it
MIN_TOKEN_CHARS = 32
LOOPBACK = ("127.0.0.1", "localhost", "::1")


class OperatorToken:
    """The token verifier: one bearer token, the operator's, for this server's resource."""

    def __init__(self, token: str, resource: str) -> None:
        self._token = token.encode()
        self.resource = resource

    async def verify_token(self, token: str) -> AccessToken | None:
        if not hmac.compare_digest(token.encode(), self._token):
            return None
        return AccessToken(
            token=token, client_id="scout-operator", scopes=[SCOPE], resource=self.resource
        )


def bound_socket(host: str, port: int) -> socket.socket:
    """Bind and listen first, so the address (port 0 picks one) is known before it is announced
    and a client that connects on the announcement waits in the backlog instead of being refused
    while uvicorn starts (the race a loaded CI machine lost)."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind((host, port))
    sock.listen(2048)  # uvicorn's own backlog; it listens again on this socket, harmlessly
    return sock


async def serve_http(
    bridge: ScoutBridge,
    version: str,
    sock: socket.socket,
    token: str,
    url_approvals: UrlApprovals | None = None,
) -> None:
    """Serve until interrupted; the session is closed (and recorded) either way."""
    host, port = sock.getsockname()[:2]
    shown = f"[{host}]" if ":" in host else host
    resource = f"http://{shown}:{port}{PATH}"
    auth = AuthSettings(
        issuer_url=f"http://{shown}:{port}",  # the operator issues the token, out of band
        resource_server_url=resource,
        required_scopes=[SCOPE],
        validate_token_resource=True,
    )
    app = build_server(bridge, version, url_approvals).streamable_http_app(
        streamable_http_path=PATH,
        host=host,
        auth=auth,
        token_verifier=OperatorToken(token, resource),
    )
    config = uvicorn.Config(app, log_level="warning", lifespan="on")
    print(f"scout mcp: serving {resource} (bearer token required)", file=sys.stderr, flush=True)
    try:
        await uvicorn.Server(config).serve(sockets=[sock])
    finally:
        await bridge.aclose()
