"""The wire: Scout's bridge served with the MCP SDK (specification 2026-07-28) over stdio.

Tools are the session's tools; resources are the world model, the findings and the approved
plan. `server/discover` is the SDK's own, answered from what is registered here, before the
session is opened (or before the SDK loads, from the SDK's answer written down:
agent/mcp/discovery.py). The server asks a client for input only to show it Scout's approval
page (URL mode, agent/mcp/url_approval.py); any other input responses or `requestState` were not
asked for, and the call is refused unrun (no form a client fills in can approve anything;
agent/mcp/approvals.py says who does). Tool annotations are left out:
they are hints a host may trust, and the gate, not a hint, decides what needs a person.
"""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable
from typing import Any, TextIO, TypeVar

import anyio
from mcp import types
from mcp.server.context import ServerRequestContext
from mcp.server.lowlevel.server import Server
from mcp.server.stdio import stdio_server
from mcp.shared.exceptions import MCPError

from agent.mcp.bridge import ScoutBridge, SessionUnavailable
from agent.mcp.sealed_state import StateRefused
from agent.mcp.url_approval import UrlApprovals, declares_url_mode

INSTRUCTIONS = (
    "Scout deploys and proves LLM serving across GPU hosts. Read before you act: recon, then "
    "plan_deployment, then propose_plan. Until a person approves a plan nothing changes; an "
    "answer with status approval_pending means a person must decide it with `scout approvals` "
    "(or Scout's webhook does): tell the user, wait, then call again with the same input and "
    "the approval_id. Never try another way around a refusal."
)
Handler = TypeVar("Handler", bound=Callable[..., Awaitable[Any]])
UNASKED_INPUT = (
    "Not run: this call carries input responses or a requestState, and Scout asked for none. "
    "Approvals are decided by Scout's operator (`scout approvals`), never in the call; call "
    "again without them."
)
STATE_REFUSED = (
    "Approvals are decided by Scout's operator, never in the call: call again without a "
    "requestState, or with the approval_id Scout gave."
)


def client_name(ctx: ServerRequestContext[Any, Any]) -> str:
    """What the client says it is (unverified: for the record, never for a decision)."""
    info = (ctx.meta or {}).get(types.CLIENT_INFO_META_KEY)
    if isinstance(info, dict) and info.get("name"):
        return f"{info['name']} {info.get('version', '')}".strip()
    return "unnamed client"


def said(handler: Handler) -> Handler:
    """A session that cannot open is the request's error in its own words (the SDK says only
    "Internal server error" of any other exception)."""

    async def answer(ctx: ServerRequestContext[Any, Any], params: Any) -> Any:
        try:
            return await handler(ctx, params)
        except SessionUnavailable as exc:
            raise MCPError(types.INTERNAL_ERROR, f"scout mcp: {exc}") from None

    return answer  # type: ignore[return-value]


def build_server(
    bridge: ScoutBridge, version: str, url_approvals: UrlApprovals | None = None
) -> Server[Any]:
    """Scout's server; with `url_approvals`, a client that declares URL-mode elicitation is
    pointed at the approval page when a call waits for a person."""

    async def list_tools(
        ctx: ServerRequestContext[Any, Any], params: types.PaginatedRequestParams | None
    ) -> types.ListToolsResult:
        return types.ListToolsResult(
            tools=[
                types.Tool(
                    name=d["name"], description=d["description"], input_schema=d["input_schema"]
                )
                for d in await bridge.tools()
            ]
        )

    async def call_tool(
        ctx: ServerRequestContext[Any, Any], params: types.CallToolRequestParams
    ) -> types.CallToolResult | types.InputRequiredResult:
        arguments = params.arguments or {}
        if params.request_state is not None and url_approvals is not None:
            try:
                arguments = url_approvals.redeem(params.name, arguments, params.request_state)
            except StateRefused as exc:
                await _note(bridge, "mcp_state_refused", f"{client_name(ctx)}: {exc}; not run")
                return _result("refused", f"Not run: {exc}. {STATE_REFUSED}", {})
        elif params.input_responses or params.request_state is not None:
            await _note(
                bridge,
                "mcp_unasked_input",
                f"{client_name(ctx)} sent input Scout never asked for with a "
                f"{params.name} call; not run",
            )
            return _result("refused", UNASKED_INPUT, {})
        outcome = await bridge.call(params.name, arguments, client_name(ctx))
        asks_page = params.request_state is None and url_approvals is not None
        if outcome.status == "approval_pending" and asks_page and declares_url_mode(ctx):
            return url_approvals.ask(params.name, arguments, outcome)  # type: ignore[union-attr]
        return _result(outcome.status, outcome.text, outcome.fields)

    async def list_resources(
        ctx: ServerRequestContext[Any, Any], params: types.PaginatedRequestParams | None
    ) -> types.ListResourcesResult:
        held = await bridge.resources()
        return types.ListResourcesResult(
            resources=[
                types.Resource(
                    uri=uri,
                    name=uri.removeprefix("scout://"),
                    description=about,
                    mime_type="application/json",
                )
                for uri, (about, _) in held.items()
            ]
        )

    async def read_resource(
        ctx: ServerRequestContext[Any, Any], params: types.ReadResourceRequestParams
    ) -> types.ReadResourceResult:
        held = await bridge.resources()
        if params.uri not in held:
            raise ValueError(f"no resource {params.uri}; there are {', '.join(held)}")
        return types.ReadResourceResult(
            contents=[
                types.TextResourceContents(
                    uri=params.uri, mime_type="application/json", text=held[params.uri][1]
                )
            ]
        )

    return Server(
        "scout",
        version=version,
        title="Scout",
        description="Gated, approved LLM deployment across GPU hosts",
        instructions=INSTRUCTIONS,
        on_list_tools=said(list_tools),
        on_call_tool=said(call_tool),
        on_list_resources=said(list_resources),
        on_read_resource=said(read_resource),
    )


async def _note(bridge: ScoutBridge, kind: str, message: str) -> None:
    from agent.loop.events import Notice

    runtime = await bridge.runtime()
    runtime.session.recorder.emit(Notice(level="warning", kind=kind, message=message))


def _result(status: str, text: str, fields: dict[str, Any]) -> types.CallToolResult:
    structured = {**fields, "status": status}
    return types.CallToolResult(
        content=[types.TextContent(text=text)],
        structured_content=json.loads(json.dumps(structured, default=str)),
        is_error=status != "done",
    )


async def serve_stdio(
    bridge: ScoutBridge, version: str, wire_in: TextIO, url_approvals: UrlApprovals | None = None
) -> None:
    """Serve until the client closes `wire_in` (stdin, from where discovery answered before the
    SDK loaded left it: agent/mcp/discovery.py); the session is closed (and recorded) either way."""
    server = build_server(bridge, version, url_approvals)
    try:
        async with stdio_server(stdin=anyio.wrap_file(wire_in)) as (read_stream, write_stream):
            await server.run(read_stream, write_stream, server.create_initialization_options())
    finally:
        await bridge.aclose()
