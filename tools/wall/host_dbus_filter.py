"""What the wall's D-Bus proxy passes: method calls that read (host_dbus_proxy.py relays).

A walled call's D-Bus client (systemctl, busctl, gdbus, nmcli, timedatectl) reaches the system
bus only through the proxy, which hands every message the client sends to `refusal`. As
xdg-dbus-proxy does for sandboxed desktop applications (github.com/flatpak/xdg-dbus-proxy,
its `--call` rules), it passes a METHOD_CALL only when its (INTERFACE, MEMBER) is a read on
READS; a call without an INTERFACE field is refused (the service would pick any interface
with that member: fail closed), so are signals, replies and errors the client would send,
and anything this parser cannot read. What the bus sends to the client passes untouched.

The read lists come from the services' own interface documentation, not from guesses:
- the bus driver: the D-Bus specification, "Message Bus Messages"
  (dbus.freedesktop.org/doc/dbus-specification.html): not RequestName, ReleaseName,
  StartServiceByName, UpdateActivationEnvironment, BecomeMonitor, nor an eavesdropping match;
- systemd: org.freedesktop.systemd1(5), org.freedesktop.login1(5),
  org.freedesktop.timedate1(5), org.freedesktop.hostname1(5), org.freedesktop.locale1(5),
  org.freedesktop.network1(5)
  (their List*/Get*/Can*/Describe methods; every Start/Stop/Set*/Enable*/Kill/... is left out);
- NetworkManager: its D-Bus API reference (networkmanager.dev/docs/api/latest/spec.html):
  GetDevices, GetAllDevices, GetPermissions, Settings.ListConnections,
  Settings.Connection.GetSettings, never GetSecrets, CheckConnectivity or RequestScan.
A refused call is answered as dbus-daemon answers a call its policy denies: an ERROR
org.freedesktop.DBus.Error.AccessDenied from org.freedesktop.DBus naming the method, so the
client prints a clear error instead of waiting (`error_reply`); NO_REPLY_EXPECTED: dropped.
Where the proxy cannot reach the bus, every call is answered NoServer, saying why.

A read of a service that is not running starts it (D-Bus activation, as any client's first
call does, and as systemctl and timedatectl rely on); StartServiceByName, which only starts, is
refused.

Message layout: the specification's "Message Format": a 16-byte fixed header (endianness
'l'/'B', type, flags, version, body length, serial), the header-field array's length, the
fields (BYTE code, VARIANT) each aligned to 8, the body aligned to 8. Imported only by the
proxy's serving process, after the fork. Standard library only, Python 3.8+: it runs on the
host (tools/wall/command.py ships it).
"""

from __future__ import annotations

import _struct

MAX_MESSAGE = 1 << 27  # the specification's limit: 128 MiB
METHOD_CALL, ERROR = 1, 3
NO_REPLY_EXPECTED = 0x1
ACCESS_DENIED = "org.freedesktop.DBus.Error.AccessDenied"
NO_SERVER = "org.freedesktop.DBus.Error.NoServer"
REFUSED = "refused by the wall's read-only D-Bus proxy: "
BUS = "org.freedesktop.DBus"
_SYSTEMD = "org.freedesktop.systemd1."
_NM = "org.freedesktop.NetworkManager"
_PROCESSES = ("GetProcesses",)
READS: dict[str, tuple[str, ...]] = {
    "org.freedesktop.DBus.Properties": ("Get", "GetAll"),
    "org.freedesktop.DBus.Introspectable": ("Introspect",),
    "org.freedesktop.DBus.Peer": ("Ping", "GetMachineId"),
    "org.freedesktop.DBus.ObjectManager": ("GetManagedObjects",),
    BUS: (
        "Hello", "AddMatch", "RemoveMatch", "ListNames", "ListActivatableNames", "NameHasOwner",
        "GetNameOwner", "ListQueuedOwners", "GetConnectionUnixUser", "GetId",
        "GetConnectionUnixProcessID", "GetConnectionCredentials", "GetAdtAuditSessionData",
        "GetConnectionSELinuxSecurityContext",
    ),
    _SYSTEMD + "Manager": (
        "GetUnit", "GetUnitByPID", "GetUnitByInvocationID", "GetUnitByControlGroup", "LoadUnit",
        "GetJob", "GetJobAfter", "GetJobBefore", "GetUnitProcesses", "ListUnits",
        "ListUnitsFiltered", "ListUnitsByPatterns", "ListUnitsByNames", "ListJobs",
        "ListUnitFiles", "ListUnitFilesByPatterns", "GetUnitFileState", "GetUnitFileLinks",
        "GetDefaultTarget", "GetDynamicUsers", "LookupDynamicUserByName",
        "LookupDynamicUserByUID", "Dump", "DumpUnitsMatchingPatterns",
    ),
    _SYSTEMD + "Job": ("GetAfter", "GetBefore"),
    **{_SYSTEMD + kind: _PROCESSES for kind in ("Service", "Scope", "Slice", "Socket",
                                                 "Mount", "Swap")},
    "org.freedesktop.login1.Manager": (
        "GetSession", "GetSessionByPID", "GetUser", "GetUserByPID", "GetSeat", "ListSessions",
        "ListUsers", "ListSeats", "ListInhibitors", "CanPowerOff", "CanReboot", "CanHalt",
        "CanSuspend", "CanHibernate", "CanHybridSleep", "CanSuspendThenHibernate",
        "CanRebootParameter", "CanRebootToFirmwareSetup", "CanRebootToBootLoaderMenu",
        "CanRebootToBootLoaderEntry",
    ),
    "org.freedesktop.timedate1": ("ListTimezones",),
    "org.freedesktop.network1.Manager": (
        "ListLinks", "GetLinkByName", "GetLinkByIndex", "Describe", "DescribeLink",
    ),
    "org.freedesktop.network1.Link": ("Describe",),
    "org.freedesktop.hostname1": ("Describe", "GetProductUUID", "GetHardwareSerial"),
    _NM: ("GetDevices", "GetAllDevices", "GetDeviceByIpIface", "GetPermissions", "GetLogging"),
    _NM + ".Settings": ("ListConnections", "GetConnectionByUuid"),
    _NM + ".Settings.Connection": ("GetSettings",),
    _NM + ".Device": ("GetAppliedConnection",),
    _NM + ".Device.Wireless": ("GetAccessPoints", "GetAllAccessPoints"),
}  # fmt: skip
# header field code -> (name, the signature the specification gives it)
_FIELDS = {1: ("path", b"o"), 2: ("interface", b"s"), 3: ("member", b"s"),
           4: ("error_name", b"s"), 5: ("reply_serial", b"u"), 6: ("destination", b"s"),
           7: ("sender", b"s"), 8: ("signature", b"g"), 9: ("unix_fds", b"u")}  # fmt: skip
_TYPES = {1: "method call", 2: "method return", 3: "error", 4: "signal"}


class Message:
    """One message's fixed header and header fields, as read from the wire."""

    __slots__ = ("body_at", "data", "fields", "flags", "kind", "order", "serial")

    def __init__(self, data: bytes) -> None:
        self.data = data
        self.order = _order(data)
        self.kind, self.flags, version = data[1], data[2], data[3]
        if version != 1:
            raise ValueError(f"protocol version {version}")
        _, self.serial, length = _struct.unpack(self.order + "III", data[4:16])
        self.body_at = _aligned(16 + length, 8)
        self.fields: dict[str, object] = {}
        at = 16
        while at < 16 + length:
            at = _aligned(at, 8)
            code, size = data[at], data[at + 1]
            signature, at = data[at + 2 : at + 2 + size], at + 3 + size
            name, wanted = _FIELDS.get(code, ("", b""))
            if not name or signature != wanted:
                raise ValueError(f"header field {code} of signature {signature!r}")
            self.fields[name], at = self._value(signature, at)

    def _value(self, signature: bytes, at: int) -> tuple[object, int]:
        if signature == b"g":
            size = self.data[at]
            return self.data[at + 1 : at + 1 + size].decode(), at + 2 + size
        at = _aligned(at, 4)
        (number,) = _struct.unpack(self.order + "I", self.data[at : at + 4])
        if signature == b"u":
            return number, at + 4
        if self.data[at + 4 + number : at + 5 + number] != b"\0":
            raise ValueError("a string without its NUL")
        return self.data[at + 4 : at + 4 + number].decode(), at + 5 + number

    def first_string(self) -> str:
        """The body's first argument where the body's signature starts with a string."""
        if not str(self.fields.get("signature", "")).startswith("s"):
            return ""
        return self._value(b"s", self.body_at)[0]  # type: ignore[return-value]


def message_length(head: bytes) -> int:
    """The whole message's length from its first 16 bytes; ValueError for no message."""
    order = _order(head)
    body, _, fields = _struct.unpack(order + "III", head[4:16])
    total = _aligned(16 + fields, 8) + body
    if total > MAX_MESSAGE:
        raise ValueError(f"a message of {total} bytes")
    return total


def refusal(data: bytes) -> tuple[str | None, Message | None]:
    """Why the client's message must not reach the bus (None: it passes), and the message as
    parsed (None where it could not be read)."""
    try:
        message = Message(data)
        why = _judge(message)
    except (ValueError, IndexError, UnicodeDecodeError, _struct.error) as exc:
        return f"a message the proxy cannot read ({exc})", None
    return why, message


def _judge(message: Message) -> str | None:
    if message.kind != METHOD_CALL:
        return f"a {_TYPES.get(message.kind, 'message')} from the client"
    interface, member = message.fields.get("interface"), message.fields.get("member")
    if not interface:
        return f"{member} without an interface (the service would choose one)"
    if member not in READS.get(str(interface), ()):
        return f"{interface}.{member} is no read"
    if member in ("AddMatch", "RemoveMatch") and "eavesdrop" in message.first_string():
        return "an eavesdropping match"
    return None


def error_reply(call: Message, name: str, said: str, serial: int) -> bytes:
    """The error `name` saying `said` in reply to `call`, from the bus driver, as dbus-daemon
    answers a call its policy denies (AccessDenied, REFUSED + why)."""
    order = call.order
    text = said.encode()
    fields = _string_field(order, 4, b"s", name.encode())
    fields += _aligned_pad(fields) + bytes((5, 1)) + b"u\0" + _struct.pack(order + "I", call.serial)
    fields += _aligned_pad(fields) + _string_field(order, 7, b"s", BUS.encode())
    fields += _aligned_pad(fields) + bytes((8, 1)) + b"g\0" + b"\x01s\0"
    body = _struct.pack(order + "I", len(text)) + text + b"\0"
    head = (b"l" if order == "<" else b"B") + bytes((ERROR, NO_REPLY_EXPECTED, 1))
    head += _struct.pack(order + "III", len(body), serial, len(fields))
    return head + fields + _aligned_pad(fields) + body


def _string_field(order: str, code: int, signature: bytes, value: bytes) -> bytes:
    return (
        bytes((code, 1)) + signature + b"\0" + _struct.pack(order + "I", len(value)) + value + b"\0"
    )


def _aligned_pad(fields: bytes) -> bytes:
    """Zero bytes up to the next 8-byte boundary after the 16-byte header and `fields`."""
    return b"\0" * (-len(fields) % 8)


def _aligned(at: int, size: int) -> int:
    return at + (-at % size)


def _order(head: bytes) -> str:
    if head[:1] == b"l":
        return "<"
    if head[:1] == b"B":
        return ">"
    raise ValueError(f"endianness byte {head[:1]!r}")
