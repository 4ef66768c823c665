"""A small `curl` for the served endpoints of the simulated cluster.

It reaches only what the simulator serves: an engine's port on this host (localhost, 0.0.0.0, its
own addresses) or on a peer it can reach. The request goes to the real HTTP server the simulator
runs on loopback for that port (its number is in HOST_DIR/engine/endpoints.json); anything else is
`Failed to connect`, as for a port nobody listens on. Inside Scout's wall only the TCP ports
the wall names can be reached (scout_wall.py), as the kernel allows on a real host.
"""

from __future__ import annotations

import http.client
import re
import sys
import time
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from . import fabric
from .scout_wall import walled_out
from .served import endpoints
from .state import read_state

_VALUE_OPTS = {
    "-X", "--request", "-H", "--header", "-d", "--data", "--data-raw", "--json", "-w",
    "--write-out", "-m", "--max-time", "-o", "--output", "--connect-timeout",
}  # fmt: skip
_LOCAL_NAMES = {"localhost", "127.0.0.1", "0.0.0.0", "::1"}


def _parse(args: list[str]) -> tuple[dict[str, list[str]], list[str]]:
    opts: dict[str, list[str]] = {}
    urls, i = [], 0
    while i < len(args):
        arg = args[i]
        if arg in _VALUE_OPTS and i + 1 < len(args):
            opts.setdefault(arg, []).append(args[i + 1])
            i += 1
        elif arg.startswith("-") and len(arg) > 1:
            for flag in [arg] if arg.startswith("--") else [f"-{c}" for c in arg[1:]]:
                opts.setdefault(flag, []).append("")
        else:
            urls.append(arg)
        i += 1
    return opts, urls


def _target_host(host_dir: Path, state: dict[str, Any], name: str) -> Path | None:
    if name in _LOCAL_NAMES or name == state["hostname"] or name in fabric.local_ips(state):
        return host_dir
    if re.fullmatch(r"[\d.]+", name) and fabric.reachable(state, host_dir, name):
        owner = fabric.owner_of(host_dir, name)
        return owner[0] if owner else None
    return None


def _serving(host_dir: Path, port: int) -> bool:
    containers = read_state(host_dir)["docker"]["containers"].values()
    return any(
        c["state"] == "running" and (c.get("serve") or {}).get("port") == port for c in containers
    )


def run_curl(args: list[str], state: dict[str, Any], host_dir: Path) -> int:
    opts, urls = _parse(args)
    if not urls:
        sys.stderr.write("curl: no URL specified\ncurl: try 'curl --help' for more information\n")
        return 2
    url = urls[0] if "://" in urls[0] else f"http://{urls[0]}"
    parts = urlsplit(url)
    name, port = parts.hostname or "", parts.port or 80
    target = None if walled_out(port) else _target_host(host_dir, state, name)
    real = None
    if target is not None:
        deadline = time.monotonic() + (2.0 if _serving(target, port) else 0)
        while (real := endpoints(target).get(str(port))) is None and time.monotonic() < deadline:
            time.sleep(0.05)
    if real is not None:
        try:
            return _request(opts, parts.path or "/", parts.query, real, f"{name}:{port}")
        except ConnectionRefusedError:
            pass  # the engine stopped a moment ago; its port is not yet out of endpoints.json
    if "-s" not in opts or "-S" in opts:
        sys.stderr.write(
            f"curl: (7) Failed to connect to {name} port {port} after 0 ms: "
            "Couldn't connect to server\n"
        )
    return 7


def _request(opts: dict[str, list[str]], path: str, query: str, real: int, host: str) -> int:
    body = (opts.get("-d") or opts.get("--data") or opts.get("--data-raw") or opts.get("--json")
            or [None])[0]  # fmt: skip
    method = (opts.get("-X") or opts.get("--request") or ["POST" if body else "GET"])[0]
    headers = {"Host": host, "User-Agent": "curl/8.5.0", "Accept": "*/*"}
    if body is not None:
        headers["Content-Type"] = "application/json" if "--json" in opts else (
            "application/x-www-form-urlencoded")  # fmt: skip
    for item in opts.get("-H", []) + opts.get("--header", []):
        key, _, value = item.partition(":")
        headers[key.strip()] = value.strip()
    timeout = float((opts.get("-m") or opts.get("--max-time") or ["60"])[0])
    conn = http.client.HTTPConnection("127.0.0.1", real, timeout=timeout)
    conn.request(method, path + (f"?{query}" if query else ""), body=body, headers=headers)
    response = conn.getresponse()
    if ("-f" in opts or "--fail" in opts) and response.status >= 400:
        if "-s" not in opts or "-S" in opts:
            sys.stderr.write(f"curl: (22) The requested URL returned error: {response.status}\n")
        return 22
    if "-i" in opts or "--include" in opts:
        sys.stdout.write(f"HTTP/1.1 {response.status} {response.reason}\r\n")
        for key, value in response.getheaders():
            sys.stdout.write(f"{key}: {value}\r\n")
        sys.stdout.write("\r\n")
    while chunk := response.read1(65536):
        sys.stdout.write(chunk.decode(errors="replace"))
        sys.stdout.flush()
    write_out = (opts.get("-w") or opts.get("--write-out") or [""])[0]
    sys.stdout.write(write_out.replace("%{http_code}", str(response.status)).replace("\\n", "\n"))
    return 0
