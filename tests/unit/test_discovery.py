"""`server/discover` answered before the SDK loads is the SDK's own answer, and it is answered
before the SDK is imported: the host's first question does not wait for the SDK's import.

Needs the optional extra: pip install -e '.[mcp,test]' (the `mcp` SDK 2.3).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

pytest.importorskip("mcp", reason="needs the extra: pip install -e '.[mcp,test]' (mcp 2.3)")

from mcp import Client, StdioServerParameters
from mcp.types import ElicitResult, Implementation

from agent.mcp.discovery import (
    CAPABILITIES_KEY,
    CLIENT_INFO_KEY,
    PROTOCOL_KEY,
    discovery_request,
    early_answer,
    open_wire,
    sdk_answer,
)

ROOT = Path(__file__).resolve().parents[2]
VERSION = "7.7.7-test"


async def accept(context, params) -> ElicitResult:
    return ElicitResult(action="accept", content={})


async def sdk_client_request(tmp_path: Path, **client: object) -> bytes:
    """The first line the SDK's client writes to a stdio server (the server then leaves)."""
    caught = tmp_path / "first-line"
    record = f"import sys; open({str(caught)!r}, 'wb').write(sys.stdin.buffer.readline())"
    params = StdioServerParameters(command=sys.executable, args=["-c", record])
    with pytest.raises(BaseException):  # noqa: B017 - the server leaves without answering
        async with Client(params, **client):  # type: ignore[arg-type]
            pass
    return caught.read_bytes().strip()


async def test_the_early_answer_is_what_the_sdk_answers(tmp_path):
    requests = [
        await sdk_client_request(tmp_path),
        await sdk_client_request(
            tmp_path,
            client_info=Implementation(name="host", version="2"),
            elicitation_callback=accept,
        ),
        discovery_request("2026-07-28", request_id="a-string-id"),
    ]
    for line in requests:
        early = early_answer(line, VERSION)
        assert early is not None, line
        assert json.loads(early) == await sdk_answer(line, VERSION)


async def test_what_the_early_answer_declines_the_sdk_judges(tmp_path):
    """Only a plain discovery request is answered early; each of these the SDK answers
    itself (with an error, or differently), so the early path must leave them alone."""
    plain = json.loads(discovery_request("2026-07-28"))
    unsupported = json.loads(json.dumps(plain))
    unsupported["params"]["_meta"][PROTOCOL_KEY] = "2025-11-25"
    titled = json.loads(json.dumps(plain))
    titled["params"]["_meta"][CLIENT_INFO_KEY] = {"name": "h", "version": "1", "title": "H"}
    no_envelope = {**plain, "params": {}}
    old_rpc = {**plain, "jsonrpc": "1.0"}
    listing = {**plain, "method": "tools/list"}
    for request in (unsupported, titled, no_envelope, listing, old_rpc):
        line = json.dumps(request).encode()
        assert early_answer(line, VERSION) is None, request
    assert "error" in await sdk_answer(json.dumps(unsupported).encode(), VERSION)


CAPABILITIES = [
    {"roots": {"listChanged": True}},
    {"elicitation": {"form": {}, "url": {}}, "sampling": {"tools": {}}},
    {"elicitation": 5},
    {"elicitation": {"url": 3}},
    {"elicitation": {"url": True}},
    {"roots": {"listChanged": "yes"}},
    {"experimental": {"x": {"y": 1}}},
    {"unknown": {"nested": {}}},
    [],
]


async def test_the_early_answer_never_says_what_the_sdk_would_not():
    """Over envelopes the SDK accepts and envelopes it refuses: the early path answers as the
    SDK does, or leaves the request to it."""
    answered = 0
    for capabilities in CAPABILITIES:
        request = json.loads(discovery_request("2026-07-28"))
        request["params"]["_meta"][CAPABILITIES_KEY] = capabilities
        line = json.dumps(request).encode()
        early = early_answer(line, VERSION)
        if early is not None:
            answered += 1
            assert json.loads(early) == await sdk_answer(line, VERSION), capabilities
    assert answered >= 3


def test_a_line_the_early_path_declines_is_still_read_by_the_sdk(tmp_path):
    listing = json.dumps({"jsonrpc": "2.0", "id": 3, "method": "tools/list"}).encode()
    read_end, write_end = os.pipe()
    answer_read, answer_write = os.pipe()
    os.write(write_end, listing + b"\n" + b'{"next": 1}\n')
    os.close(write_end)
    opening = open_wire(read_end, answer_write, VERSION)
    assert not opening.answered
    wire = opening.rest_of_wire(read_end)
    assert wire.readline().encode() == listing + b"\n"
    assert wire.readline() == '{"next": 1}\n'
    os.close(answer_write)
    assert os.read(answer_read, 10) == b""  # nothing was said for the SDK


SDK_ARRIVES = """
import json, os, select, sys
from importlib.abc import MetaPathFinder

answer_read, answer_write, request_read = (int(a) for a in sys.argv[1:4])
seen = {}

class FirstSdkImport(MetaPathFinder):
    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0] in ("mcp", "mcp_types") and not seen:
            ready, _, _ = select.select([answer_read], [], [], 0)
            seen.update(module=name, answered_first=bool(ready))
        return None

sys.meta_path.insert(0, FirstSdkImport())
os.dup2(request_read, 0)
os.dup2(answer_write, 1)
from agent.faces.cli import main
code = main(["mcp", "--sim", "fresh-pair"])
print(json.dumps({**seen, "code": code}), file=sys.stderr)
"""


@pytest.mark.slow
def test_discovery_is_on_the_wire_before_the_sdk_is_imported(tmp_path):
    """`scout mcp` as the host starts it; the moment the SDK's first module is looked up,
    the answer to discovery is already readable on stdout."""
    request_read, request_write = os.pipe()
    answer_read, answer_write = os.pipe()
    os.write(request_write, discovery_request("2026-07-28", request_id=9) + b"\n")
    os.close(request_write)
    env = {**os.environ, "SCOUT_HOME": str(tmp_path / "home"), "PYTHONPATH": str(ROOT)}
    fds = (answer_read, answer_write, request_read)
    ran = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(SDK_ARRIVES), *map(str, fds)],
        pass_fds=fds,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        env=env,
        cwd=ROOT,
        timeout=60,
    )
    for fd in fds[1:]:
        os.close(fd)
    seen = json.loads(ran.stderr.decode().strip().splitlines()[-1])
    assert seen["module"] in ("mcp", "mcp_types") and seen["code"] == 0
    assert seen["answered_first"] is True
    answer = json.loads(os.read(answer_read, 1 << 16).decode().splitlines()[0])
    os.close(answer_read)
    assert answer["id"] == 9 and answer["result"]["supportedVersions"] == ["2026-07-28"]


def test_a_stale_description_is_left_to_the_sdk(tmp_path, monkeypatch):
    """Another SDK version than the one that wrote discovery.json: no early answer."""
    import agent.mcp.discovery as discovery

    monkeypatch.setattr(discovery, "sdk_version", lambda: "0.0.1")
    assert early_answer(discovery_request("2026-07-28"), VERSION) is None
