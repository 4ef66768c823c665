"""The D-Bus proxy's judgement on real message bytes.

The fixtures (data/dbus_messages.txt) are what busctl (sd-bus), gdbus (GLib) and dbus-send
(libdbus) sent through the proxy to a private dbus-daemon: their Hello and reads pass; their
RequestName, BecomeMonitor, UpdateActivationEnvironment, ReleaseName and signals are refused.
Messages no client would send (no INTERFACE, an eavesdropping match, a big-endian call, bytes
that are no message) are built here per the specification's "Message Format".
"""

from __future__ import annotations

import gzip
import re
import struct
import subprocess
from pathlib import Path

import pytest

from tools.wall.host_dbus_filter import (
    ACCESS_DENIED,
    ERROR,
    READS,
    REFUSED,
    Message,
    error_reply,
    message_length,
    refusal,
)

CAPTURED = Path(__file__).parent / "data" / "dbus_messages.txt"
MESSAGES: dict[tuple[str, int], bytes] = {
    (name, int(index)): bytes.fromhex(text)
    for name, index, text in (
        line.split("\t") for line in CAPTURED.read_text().splitlines() if line[:1] != "#"
    )
}


def _field(order: str, code: int, signature: str, value: str | int) -> bytes:
    head = bytes((code, 1)) + signature.encode() + b"\0"
    if signature == "u":
        return head + struct.pack(order + "I", value)
    if signature == "g":
        return head + bytes((len(str(value)),)) + str(value).encode() + b"\0"
    return head + struct.pack(order + "I", len(str(value))) + str(value).encode() + b"\0"


def built_call(
    member: str,
    interface: str | None = "org.freedesktop.DBus",
    body_text: str | None = None,
    order: str = "<",
) -> bytes:
    """A METHOD_CALL to the bus driver, serial 7, with one string argument where given."""
    fields = b""
    parts = [(1, "o", "/org/freedesktop/DBus"), (6, "s", "org.freedesktop.DBus"), (3, "s", member)]
    parts += [(2, "s", interface)] if interface else []
    parts += [(8, "g", "s")] if body_text is not None else []
    for code, signature, value in parts:
        fields += b"\0" * (-len(fields) % 8) + _field(order, code, signature, value)
    body = b""
    if body_text is not None:
        body = struct.pack(order + "I", len(body_text)) + body_text.encode() + b"\0"
    head = (b"l" if order == "<" else b"B") + bytes((1, 0, 1))
    head += struct.pack(order + "III", len(body), 7, len(fields))
    return head + fields + b"\0" * (-len(fields) % 8) + body


@pytest.mark.parametrize("key", sorted(MESSAGES))
def test_each_captured_message_is_framed_by_its_own_header(key: tuple[str, int]) -> None:
    assert message_length(MESSAGES[key][:16]) == len(MESSAGES[key])


@pytest.mark.parametrize(
    "key",
    [("busctl-listnames", 0), ("busctl-listnames", 1), ("gdbus-getall", 0),
     ("gdbus-getall", 1), ("gdbus-getall", 2), ("busctl-requestname", 0)],
)  # fmt: skip
def test_hello_match_rules_and_reads_pass(key: tuple[str, int]) -> None:
    why, message = refusal(MESSAGES[key])
    assert why is None and message is not None


@pytest.mark.parametrize(
    ("key", "said"),
    [
        (("busctl-requestname", 1), "org.freedesktop.DBus.RequestName is no read"),
        (("gdbus-becomemonitor", 2), "org.freedesktop.DBus.Monitoring.BecomeMonitor is no read"),
        (
            ("dbus-send-updateactivationenvironment", 1),
            "org.freedesktop.DBus.UpdateActivationEnvironment is no read",
        ),
        (("dbus-send-releasename", 1), "org.freedesktop.DBus.ReleaseName is no read"),
        (("dbus-send-signal", 1), "a signal from the client"),
    ],
)
def test_changes_and_signals_are_refused_naming_what(key: tuple[str, int], said: str) -> None:
    why, message = refusal(MESSAGES[key])
    assert why == said and message is not None


def test_a_call_with_no_interface_is_refused() -> None:
    assert refusal(built_call("ListNames"))[0] is None  # the same call with its interface
    why, _ = refusal(built_call("ListNames", interface=None))
    assert why == "ListNames without an interface (the service would choose one)"


def test_an_eavesdropping_match_is_refused_and_a_plain_one_passes() -> None:
    assert refusal(built_call("AddMatch", body_text="type='signal'"))[0] is None
    why, _ = refusal(built_call("AddMatch", body_text="type='method_call',eavesdrop='true'"))
    assert why == "an eavesdropping match"


def test_a_big_endian_call_is_read_as_a_little_endian_one() -> None:
    assert refusal(built_call("ListNames", order=">"))[0] is None
    assert refusal(built_call("RequestName", order=">"))[0] == (
        "org.freedesktop.DBus.RequestName is no read"
    )


@pytest.mark.parametrize(
    "data",
    [
        b"GET / HTTP/1.1\r\n\r\n",
        built_call("ListNames").replace(b"l\x01\x00\x01", b"l\x01\x00\x02", 1),
        built_call("ListNames")[:40],
        built_call("ListNames").replace(b"\x03\x01s\x00", b"\x0a\x01s\x00", 1),  # field 10
    ],
)
def test_what_the_filter_cannot_read_is_refused(data: bytes) -> None:
    why, message = refusal(data)
    assert message is None and why is not None and "cannot read" in why


def test_the_refusal_is_an_access_denied_error_replying_to_the_call() -> None:
    call = Message(MESSAGES["busctl-requestname", 1])
    said = REFUSED + "org.freedesktop.DBus.RequestName is no read"
    reply = Message(error_reply(call, ACCESS_DENIED, said, 0x80000001))
    assert reply.kind == ERROR and reply.serial == 0x80000001
    assert reply.fields["reply_serial"] == call.serial
    assert reply.fields["error_name"] == ACCESS_DENIED
    assert reply.fields["sender"] == "org.freedesktop.DBus"
    assert reply.first_string() == (
        "refused by the wall's read-only D-Bus proxy: org.freedesktop.DBus.RequestName is no read"
    )
    assert message_length(reply.data[:16]) == len(reply.data)


def _documented_methods(page: str) -> set[str] | None:
    """Method names a service's man page declares (`Name(in ...` lines), None without man."""
    try:
        found = subprocess.run(["man", "-w", page], capture_output=True, text=True, check=True)
    except (OSError, subprocess.CalledProcessError):
        return None
    path = found.stdout.strip()
    raw = Path(path).read_bytes()
    text = (gzip.decompress(raw) if path.endswith(".gz") else raw).decode(errors="replace")
    return set(re.findall(r"^\s*([A-Z][A-Za-z]+)\(", text, re.M))


@pytest.mark.parametrize(
    ("page", "prefix"),
    [("org.freedesktop.systemd1", "org.freedesktop.systemd1."),
     ("org.freedesktop.login1", "org.freedesktop.login1."),
     ("org.freedesktop.hostname1", "org.freedesktop.hostname1"),
     ("org.freedesktop.timedate1", "org.freedesktop.timedate1"),
     ("org.freedesktop.network1", "org.freedesktop.network1.")],
)  # fmt: skip
def test_every_systemd_read_is_a_method_its_manual_documents(page: str, prefix: str) -> None:
    documented = _documented_methods(page)
    if not documented:
        pytest.skip(f"no {page}(5) man page here")
    listed = {m for interface, ms in READS.items() if interface.startswith(prefix) for m in ms}
    assert listed and listed <= documented, listed - documented
    changes = {m for m in documented if m.startswith(("Start", "Stop", "Set", "Kill", "Enable"))}
    assert not listed & changes
