#!/usr/bin/env python3
"""Example receiver for Scout's approval webhook: verify, decide, answer signed.

Scout (`scout run`, headless) POSTs every step that needs approval to a webhook. This small
stdlib server is one such webhook. It checks Scout's signature, decides — from a rules file, or
by asking on its own terminal — and answers with a signed decision, either in the response body
or (`--async`) later as a signed callback POST to the `callback_url` Scout sent.

Usage:
    export SCOUT_WEBHOOK_SECRET="$(openssl rand -hex 32)"   # the same secret Scout is given
    python examples/approval_receiver.py --port 8787 --rules rules.yaml
    python examples/approval_receiver.py --port 8787 --interactive
    python examples/approval_receiver.py --port 8787 --rules rules.yaml --async

Rules file (YAML or JSON; deny rules win, anything no rule approves is denied):
    approve:
      - {tool: ssh_exec, risk: read_only}
      - {tool: docker_ctl, host: "spark-*"}
    deny:
      - {risk: destructive, message: "no destructive steps from CI"}
A rule matches when every key it names matches the request: `tool`, `risk`, `host` (any of the
step's hosts); values may use shell wildcards (`docker_*`). `message` is sent back with the
verdict. `approve_steps: true` on a rule that approves a plan (`tool: propose_plan`) also
approves each of its steps as written: Scout then runs exactly those calls, in order, without
asking again (anything that differs still asks).

Interactive: each request is shown on this terminal; answer `y` (approve), `s` (a plan: approve
it and its steps as written), `n [message]` (deny, the message goes to the model), or `e` (type
the edited input as one line of JSON).

Protocol: every message either way carries `X-Scout-Timestamp: <unix seconds>` and
`X-Scout-Signature-256: sha256=<hex HMAC-SHA256(secret, "<timestamp>.<body>")>` over the exact
body bytes. Answers are JSON: {"fingerprint", "decision": "approved" | "approved_with_edit" |
"denied", "message", "edited_input", "decided_by", "approve_steps"}; the fingerprint must be the
request's.
Only the standard library is needed (plus PyYAML for a YAML rules file).
"""

from __future__ import annotations

import argparse
import fnmatch
import getpass
import hashlib
import hmac
import json
import os
import sys
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any, TextIO

TIMESTAMP_HEADER = "X-Scout-Timestamp"
SIGNATURE_HEADER = "X-Scout-Signature-256"
TOLERANCE_S = 300
MAX_BODY_BYTES = 1024 * 1024
MIN_SECRET_CHARS = 32
RULE_KEYS = {"tool", "risk", "host", "message", "approve_steps"}

Verdict = dict[str, Any]
Decider = Callable[[dict[str, Any]], Verdict]


def sign(secret: bytes, timestamp: int, body: bytes) -> str:
    """`sha256=<hex>` over "<timestamp>.<body>", the value of X-Scout-Signature-256."""
    mac = hmac.new(secret, str(timestamp).encode() + b"." + body, hashlib.sha256)
    return "sha256=" + mac.hexdigest()


def signed_headers(secret: bytes, body: bytes, clock: Callable[[], float]) -> dict[str, str]:
    timestamp = int(clock())
    return {TIMESTAMP_HEADER: str(timestamp), SIGNATURE_HEADER: sign(secret, timestamp, body)}


class SignatureCheck:
    """Accepts a signed request once: right secret, fresh timestamp, never seen before."""

    def __init__(self, secret: bytes, clock: Callable[[], float] = time.time) -> None:
        self._secret = secret
        self._clock = clock
        self._seen: set[tuple[int, str]] = set()
        self._lock = threading.Lock()

    def problem(self, headers: Any, body: bytes) -> str | None:
        """None when the request may be trusted, else what is wrong with it."""
        timestamp, sent = headers.get(TIMESTAMP_HEADER), headers.get(SIGNATURE_HEADER)
        if not timestamp or not sent:
            return "unsigned request"
        digits = timestamp.strip()
        if not (digits.isascii() and digits.isdigit()) or (len(digits) > 1 and digits[0] == "0"):
            return "malformed timestamp"
        seconds = int(digits)
        if not hmac.compare_digest(sign(self._secret, seconds, body), sent.strip()):
            return "bad signature"
        if abs(self._clock() - seconds) > TOLERANCE_S:
            return "stale timestamp"
        with self._lock:  # keyed by the number, so no other spelling of it is a new request
            if (seconds, sent.strip()) in self._seen:
                return "replayed request"
            self._seen.add((seconds, sent.strip()))
        return None


def _unique(pairs: list[tuple[Any, Any]], path: Path, lines: list[int] | None = None) -> dict:
    """A mapping that names a key once: a second `deny:` would silently drop the first's rules."""
    where: dict[Any, int] = {}
    for index, (key, _) in enumerate(pairs):
        if key in where:
            at = f" (lines {lines[where[key]]} and {lines[index]})" if lines else ""
            raise ValueError(f"{path}: key {key!r} appears twice{at}")
        where[key] = index
    return dict(pairs)


def _unique_key_loader(yaml: Any, path: Path) -> type:
    """PyYAML's SafeLoader, refusing a key given twice in one mapping (merge keys aside)."""

    class Loader(yaml.SafeLoader):
        def construct_mapping(self, node: Any, deep: bool = False) -> dict:
            own = [(k, v) for k, v in node.value if k.tag != "tag:yaml.org,2002:merge"]
            keys = [(self.construct_object(k), None) for k, _ in own]
            _unique(keys, path, [k.start_mark.line + 1 for k, _ in own])
            return super().construct_mapping(node, deep)

    return Loader


class RulesDecider:
    """Decides from approve/deny rules; deny wins, and nothing approved means denied."""

    def __init__(self, approve: list[dict], deny: list[dict], source: str) -> None:
        for rule in [*approve, *deny]:
            unknown = set(rule) - RULE_KEYS
            if unknown:
                raise ValueError(
                    f"{source}: unknown rule key(s) {sorted(unknown)}; use {sorted(RULE_KEYS)}"
                )
        self._approve, self._deny, self._source = approve, deny, source

    @classmethod
    def from_file(cls, path: Path) -> RulesDecider:
        text = path.read_text()
        try:
            import yaml  # PyYAML; JSON is valid YAML too
        except ImportError:
            rules = json.loads(text, object_pairs_hook=lambda pairs: _unique(pairs, path))
        else:
            try:
                rules = yaml.load(text, Loader=_unique_key_loader(yaml, path)) or {}
            except yaml.YAMLError as exc:
                raise ValueError(f"{path}: not valid YAML ({exc})") from None
        if not isinstance(rules, dict):
            raise ValueError(f"{path}: expected a mapping with `approve:` and `deny:` lists")
        return cls(rules.get("approve") or [], rules.get("deny") or [], source=str(path))

    def __call__(self, request: dict[str, Any]) -> Verdict:
        for rule in self._deny:
            if _matches(rule, request):
                return _verdict("denied", rule.get("message", "denied by rule"), self._source)
        for rule in self._approve:
            if _matches(rule, request):
                verdict = _verdict("approved", rule.get("message", ""), self._source)
                steps = rule.get("approve_steps") is True and request.get("tool") == "propose_plan"
                return {**verdict, "approve_steps": steps}
        return _verdict("denied", "no rule approves this step (default deny)", self._source)


def _matches(rule: dict[str, Any], request: dict[str, Any]) -> bool:
    for key, pattern in rule.items():
        if key in ("message", "approve_steps"):
            continue
        values = (request.get("hosts") or []) if key == "host" else [request.get(key)]
        if not any(fnmatch.fnmatchcase(str(value), str(pattern)) for value in values):
            return False
    return True


def _verdict(
    decision: str, message: str, decided_by: str, edited_input: dict | None = None
) -> Verdict:
    return {
        "decision": decision,
        "message": message,
        "edited_input": edited_input,
        "decided_by": decided_by,
    }


class TerminalDecider:
    """Asks the operator at this terminal, one request at a time."""

    def __init__(self, ask: Callable[[str], str] = input, out: TextIO = sys.stdout) -> None:
        self._ask, self._out = ask, out
        self._lock = threading.Lock()
        self._who = f"terminal:{getpass.getuser()}"

    def __call__(self, request: dict[str, Any]) -> Verdict:
        with self._lock:
            self._show(request)
            while True:
                try:
                    keys = "[y]es / [s]teps too / [n]o [message] / [e]dit"
                    if request.get("tool") != "propose_plan":
                        keys = "[y]es / [n]o [message] / [e]dit"
                    answer = self._ask(f"approve? {keys}: ").strip()
                except EOFError:
                    return _verdict("denied", "no operator at the receiver's terminal", self._who)
                choice, _, message = answer.partition(" ")
                if choice.lower() in ("y", "yes"):
                    return _verdict("approved", message.strip(), self._who)
                if choice.lower() in ("s", "steps") and request.get("tool") == "propose_plan":
                    verdict = _verdict("approved", message.strip(), self._who)
                    return {**verdict, "approve_steps": True}
                if choice.lower() in ("n", "no"):
                    return _verdict("denied", message.strip() or "denied by operator", self._who)
                if choice.lower() in ("e", "edit"):
                    edited = self._edited_input()
                    if edited is not None:
                        return _verdict("approved_with_edit", "edited", self._who, edited)
                    continue
                print("answer y, n [message] or e", file=self._out)

    def _show(self, request: dict[str, Any]) -> None:
        print(
            f"\n{request.get('risk', '?').upper()} step {request.get('id')}: "
            f"{request.get('tool')} on {', '.join(request.get('hosts') or []) or '(no host)'}\n"
            f"  why: {request.get('reason')}\n"
            f"  plan step: {request.get('plan_step') or '-'}\n"
            f"  input: {json.dumps(request.get('input'), sort_keys=True)}\n"
            f"  Scout waits until {request.get('expires_at')}",
            file=self._out,
            flush=True,
        )

    def _edited_input(self) -> dict | None:
        try:
            text = self._ask("edited input as one line of JSON: ")
            edited = json.loads(text)
        except EOFError:
            return None
        except json.JSONDecodeError as exc:
            print(f"not JSON ({exc.msg}); try again", file=self._out)
            return None
        if not isinstance(edited, dict):
            print("the input must be a JSON object", file=self._out)
            return None
        return edited


def make_server(
    host: str,
    port: int,
    secret: bytes,
    decide: Decider,
    *,
    async_mode: bool = False,
    clock: Callable[[], float] = time.time,
    log: TextIO = sys.stderr,
) -> ThreadingHTTPServer:
    """An HTTP server that answers Scout's approval requests (call `serve_forever`)."""
    check = SignatureCheck(secret, clock)

    def answer_for(request: dict[str, Any]) -> bytes:
        verdict = decide(request)
        body = {"id": request.get("id"), "fingerprint": request.get("fingerprint"), **verdict}
        return json.dumps(body).encode()

    def call_back(request: dict[str, Any]) -> None:
        body = answer_for(request)
        url = str(request.get("callback_url") or "")
        if not url.startswith(("http://", "https://")):
            print(f"request {request.get('id')}: no usable callback_url", file=log)
            return
        headers = {"Content-Type": "application/json", **signed_headers(secret, body, clock)}
        try:
            with urllib.request.urlopen(
                urllib.request.Request(url, data=body, headers=headers, method="POST"), timeout=10
            ) as reply:
                status = reply.status
        except urllib.error.HTTPError as exc:
            status = exc.code
        except OSError as exc:
            print(f"request {request.get('id')}: callback failed: {exc}", file=log)
            return
        print(f"request {request.get('id')}: callback answered HTTP {status}", file=log)

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            length = self.headers.get("Content-Length") or "0"
            if not length.isdigit() or int(length) > MAX_BODY_BYTES:
                self._reply(413, b'{"error": "body missing or too large"}', signed=False)
                return
            body = self.rfile.read(int(length))
            problem = check.problem(self.headers, body)
            if problem is not None:
                self._reply(401, json.dumps({"error": problem}).encode(), signed=False)
                return
            try:
                request = json.loads(body)
            except json.JSONDecodeError:
                self._reply(400, b'{"error": "body is not JSON"}', signed=False)
                return
            if async_mode:
                threading.Thread(target=call_back, args=(request,), daemon=True).start()
                self._reply(202, b'{"status": "pending"}', signed=False)
                return
            self._reply(200, answer_for(request), signed=True)

        def _reply(self, status: int, body: bytes, *, signed: bool) -> None:
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            if signed:
                for name, value in signed_headers(secret, body, clock).items():
                    self.send_header(name, value)
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, format: str, *args: Any) -> None:
            print(f"{self.address_string()} {format % args}", file=log)

    class Server(ThreadingHTTPServer):
        def handle_error(self, request: Any, client_address: Any) -> None:
            # Scout gave up waiting (its deadline passed) or hung up: say so in one line.
            print(f"connection from {client_address[0]} ended early: {sys.exc_info()[1]}", file=log)

    return Server((host, port), Handler)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Example receiver for Scout's approval webhook.")
    parser.add_argument("--host", default="127.0.0.1", help="address to listen on")
    parser.add_argument("--port", type=int, default=8787, help="port (0 picks a free one)")
    parser.add_argument(
        "--secret-env",
        default="SCOUT_WEBHOOK_SECRET",
        help="environment variable holding the shared secret",
    )
    how = parser.add_mutually_exclusive_group(required=True)
    how.add_argument("--rules", type=Path, help="YAML/JSON rules file (approve/deny lists)")
    how.add_argument("--interactive", action="store_true", help="ask on this terminal")
    parser.add_argument(
        "--async",
        dest="async_mode",
        action="store_true",
        help="answer 202 at once and POST the signed decision to Scout's callback_url later",
    )
    args = parser.parse_args(argv)

    secret = os.environ.get(args.secret_env, "")
    if len(secret) < MIN_SECRET_CHARS:
        what = "empty" if not secret else f"only {len(secret)} characters (Scout needs 32+)"
        print(
            f"error: ${args.secret_env} is {what}; export the secret Scout uses, e.g. "
            f'export {args.secret_env}="$(openssl rand -hex 32)"',
            file=sys.stderr,
        )
        return 2
    try:
        decide: Decider = RulesDecider.from_file(args.rules) if args.rules else TerminalDecider()
    except (OSError, ValueError) as exc:
        print(f"error: cannot use the rules file: {exc}", file=sys.stderr)
        return 2
    try:
        server = make_server(
            args.host, args.port, secret.encode(), decide, async_mode=args.async_mode
        )
    except OSError as exc:
        print(f"error: cannot listen on {args.host}:{args.port}: {exc}", file=sys.stderr)
        return 2
    host, port = server.server_address[:2]
    mode = "callback later (202)" if args.async_mode else "answer in the response body"
    print(f"listening on http://{host}:{port} ({mode})", flush=True)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        server.server_close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
