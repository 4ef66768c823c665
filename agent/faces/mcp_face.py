"""`scout mcp`: Scout's tools for another agent, over MCP, behind Scout's own gate.

On stdio (the default) stdout is the MCP wire, so nothing else may write there: logs go to the
log file, problems to stderr. The host's first question (`server/discover`) is answered before
the SDK is imported (agent/mcp/discovery.py), and only what the wire needs is imported before
serving; the session (and with `--sim` the simulated cluster, as `scout demo` and `scout replay
--sim` run it) opens on the first request that needs a tool. The SDK is the optional extra
`scout-agent[mcp]`: without it the command says how to install it. `--plugin` prints the folder
of the plugin for Claude Code-style hosts. `--http` serves Streamable HTTP instead, behind a
bearer token (agent/mcp/http_wire.py).
"""

from __future__ import annotations

import argparse
import getpass
import os
import socket
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING

from agent.faces.approvals_desk import add_approvals_command, desk_folder

if TYPE_CHECKING:
    from agent.faces.settings_loader import SettingsLoader
    from agent.mcp.discovery import Opening
    from agent.runtime.builder import Runtime
    from agent.runtime.settings import Settings
    from agent.safety.approvals import Approver
    from agent.safety.approvers.webhook import WebhookApprover

NEEDS_EXTRA = (
    "scout mcp: the MCP server needs the optional extra: pip install 'scout-agent[mcp]' "
    "(the `mcp` SDK, 2.3 or newer)"
)
PLUGIN = Path(__file__).resolve().parent.parent / "mcp" / "plugin"


def add_mcp_commands(sub: argparse._SubParsersAction, load: SettingsLoader) -> None:
    parser = sub.add_parser(
        "mcp",
        help="serve Scout's tools to another agent over MCP (stdio or HTTP), behind Scout's gate",
        description=(
            "Serve Scout's tools, world model and findings to an MCP client (Claude Code and "
            "the like) on stdio, or with --http on Streamable HTTP behind a bearer token. "
            "Every call passes Scout's gate, wall, plan grant and "
            "transcript; what needs a person comes back pending until `scout approvals` (or "
            "the webhook) decides it. Needs the extra: pip install 'scout-agent[mcp]'."
        ),
    )
    parser.add_argument("--inventory", help="inventory YAML of the hosts")
    parser.add_argument("--sim", metavar="SCENARIO", help="serve a fresh simulated cluster")
    parser.add_argument(
        "--approvals",
        choices=["terminal", "webhook"],
        default="terminal",
        help="terminal: a person decides with `scout approvals`; webhook: the signed webhook",
    )
    parser.add_argument("--webhook-url", help="where approval requests are POSTed")
    parser.add_argument("--webhook-secret-env", help="variable holding the webhook's secret")
    parser.add_argument(
        "--webhook-allow-http", action="store_true", help="allow a plain http:// webhook"
    )
    parser.add_argument(
        "--approval-page",
        metavar="URL",
        help="Scout's approval page, with {id} for the approval's id: a client that declares "
        "URL-mode elicitation is pointed there when a call waits for a person",
    )
    parser.add_argument(
        "--http",
        metavar="[HOST:]PORT",
        help="serve Streamable HTTP instead of stdio, on loopback unless HOST says otherwise; "
        "every request needs the bearer token in --token-env",
    )
    parser.add_argument(
        "--token-env",
        default="SCOUT_MCP_TOKEN",
        help="variable holding the bearer token for --http (default: SCOUT_MCP_TOKEN)",
    )
    parser.add_argument(
        "--plugin", action="store_true", help="print the folder of the Claude Code plugin and exit"
    )
    parser.set_defaults(func=lambda args: _cmd_mcp(args, load))
    add_approvals_command(sub)


def _fail(message: str) -> int:
    print(f"scout mcp: {message}", file=sys.stderr)
    return 1


def _cmd_mcp(args: argparse.Namespace, load: SettingsLoader) -> int:
    if args.plugin:
        print(PLUGIN)
        return 0
    from agent.mcp.discovery import open_wire, sdk_version

    if sdk_version() is None:  # asked of the installed metadata: the SDK itself loads later
        print(NEEDS_EXTRA, file=sys.stderr)
        return 1
    if args.approval_page is not None and not _is_page(args.approval_page):
        return _fail(
            f"--approval-page must be an http(s) URL with {{id}} in it, not {args.approval_page!r}"
        )
    import asyncio

    version = _version()
    if args.http is not None:
        return _cmd_mcp_http(args, load, version)
    opening = open_wire(0, 1, version)  # the host's first question, answered before the SDK loads
    return asyncio.run(_serve(args, load, version, opening))


def _cmd_mcp_http(args: argparse.Namespace, load: SettingsLoader, version: str) -> int:
    """Refuse to serve without a token worth the name; bind, then serve."""
    import asyncio

    from agent.mcp.http_wire import MIN_TOKEN_CHARS, bound_socket

    token = os.environ.get(args.token_env, "")
    if len(token) < MIN_TOKEN_CHARS:
        return _fail(
            f"--http needs a bearer token of at least {MIN_TOKEN_CHARS} characters in "
            f"${args.token_env} (e.g. python -c 'import secrets; print(secrets.token_hex(32))')"
        )
    host, _, port = args.http.rpartition(":")
    host = host.strip("[]") or "127.0.0.1"
    if not port.isdigit():
        return _fail(f"--http takes [HOST:]PORT, not {args.http!r}")
    try:
        listening = bound_socket(host, int(port))
    except (OSError, OverflowError) as exc:
        return _fail(f"cannot listen on {args.http}: {exc}")
    return asyncio.run(_serve(args, load, version, None, (listening, token)))


async def _serve(
    args: argparse.Namespace,
    load: SettingsLoader,
    version: str,
    opening: Opening | None,
    http: tuple[socket.socket, str] | None = None,
) -> int:
    """Serve at once; the settings, the approver and the session load on the first request
    that needs a tool, and a problem with them is that request's error (and said on stderr)."""
    from agent.mcp.bridge import ScoutBridge, SessionUnavailable
    from agent.mcp.server import serve_stdio

    @asynccontextmanager
    async def opener() -> AsyncIterator[Runtime]:
        try:
            async with _session(args, load) as runtime:
                yield runtime
        except SessionUnavailable as exc:
            print(f"scout mcp: {exc}", file=sys.stderr)
            raise

    way = "local account" if http is None else "bearer token over HTTP"
    principal = f"{getpass.getuser()} ({way})"
    bridge = ScoutBridge(opener, principal=principal)
    pages = None
    if args.approval_page is not None:
        from agent.mcp.url_approval import UrlApprovals

        pages = UrlApprovals(args.approval_page, principal)
    if http is not None:
        from agent.mcp.http_wire import serve_http

        await serve_http(bridge, version, *http, pages)
    elif opening is not None:
        await serve_stdio(bridge, version, opening.rest_of_wire(), pages)
    return 0


def _is_page(url: str) -> bool:
    return url.startswith(("https://", "http://")) and "{id}" in url and " " not in url


def _version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("scout-agent")
    except PackageNotFoundError:
        return "unknown"


@asynccontextmanager
async def _session(args: argparse.Namespace, load: SettingsLoader) -> AsyncIterator[Runtime]:
    """The settings, the approver (the desk, or the webhook), then the session."""
    from agent.faces.failures import inventory_problem, transcripts_problem
    from agent.mcp.approvals import ClientCallApprover
    from agent.mcp.bridge import SessionUnavailable
    from agent.mcp.desk import ApprovalDesk

    settings = load(
        {
            "inventory": args.inventory,
            "webhook_url": args.webhook_url,
            "webhook_secret_env": args.webhook_secret_env,
            "webhook_allow_insecure_http": args.webhook_allow_http or None,
        },
        log=True,
    )
    if settings is None:
        raise SessionUnavailable("the settings could not be loaded (see the line above)")
    if args.sim is None and settings.inventory is None:
        raise SessionUnavailable("no inventory: pass --inventory FILE, or --sim SCENARIO to try it")
    problem = transcripts_problem(settings) or (
        inventory_problem(settings) if args.sim is None else None
    )
    if problem is not None:
        raise SessionUnavailable(problem)
    secret = os.environ.get(settings.webhook_secret_env)
    if args.approvals == "webhook" and (not settings.webhook_url or not secret):
        raise SessionUnavailable(
            "--approvals webhook needs --webhook-url and a secret in the variable named by "
            f"--webhook-secret-env ({settings.webhook_secret_env})"
        )
    stamp = datetime.now(UTC).strftime("%Y%m%d-%H%M%S")
    transcript = settings.transcripts_dir / f"mcp-{stamp}-{os.getpid()}.jsonl"
    webhook = await _webhook(settings, secret) if args.approvals == "webhook" and secret else None
    approver = ClientCallApprover(
        ApprovalDesk(desk_folder()),
        session=transcript.stem,
        ttl_s=settings.approval_timeout_s,
        decider=webhook,
    )
    try:
        async with _runtime(settings, args.sim, approver, transcript) as runtime:
            yield runtime
    finally:
        await approver.aclose()
        if webhook is not None:
            await webhook.close()
        print(f"scout mcp: session ended; transcript: {transcript}", file=sys.stderr)


async def _webhook(settings: Settings, secret: str) -> WebhookApprover:
    from agent.mcp.bridge import SessionUnavailable
    from agent.safety.approvers.webhook import WebhookApprover

    assert settings.webhook_url is not None
    try:
        approver = WebhookApprover(
            settings.webhook_url,
            secret,
            timeout_s=settings.approval_timeout_s,
            allow_insecure_http=settings.webhook_allow_insecure_http,
        )
        await approver.start()
    except (ValueError, OSError) as exc:
        hint = "; pass --webhook-allow-http to accept that" if "plain http" in str(exc) else ""
        raise SessionUnavailable(f"cannot set up the approval webhook: {exc}{hint}") from None
    return approver


@asynccontextmanager
async def _runtime(
    settings: Settings, scenario: str | None, approver: Approver, transcript: Path
) -> AsyncIterator[Runtime]:
    """The session `scout run` would build, on the inventory's hosts or a fresh simulator."""
    from agent.loop.model_turn import NoModel

    if scenario is not None:
        from agent.replay.redrive import sim_runtime

        async with sim_runtime(
            scenario,
            client=NoModel("scout mcp"),
            approver_factory=lambda rules: approver,
            model="mcp-client",
            mode=settings.mode,
            transcript_path=transcript,
            settings={"approval_timeout_s": settings.approval_timeout_s},
        ) as runtime:
            yield runtime
        return
    from agent.runtime.builder import open_runtime

    runtime = await open_runtime(
        settings,
        client=NoModel("scout mcp"),
        approver_factory=lambda rules: approver,
        transcript_path=transcript,
    )
    try:
        yield runtime
    finally:
        await runtime.aclose()
