"""Interfaces and addresses: `ip -j addr`, `ip -br addr`, `ip -br link`, `ip [-s] addr|link show`.

Link-local addresses (169.254.0.0/16, fe80::/10) are flagged: a CX-7 port with only those has no
usable address for NCCL/Ray between two Sparks.
"""

import ipaddress
import json
import re
from typing import Any

from pydantic import BaseModel, computed_field

from tools.recon.parsers.errors import ParseError

_MAC = re.compile(r"^[0-9a-f]{2}(?::[0-9a-f]{2}){5}$", re.IGNORECASE)


class IpAddress(BaseModel):
    address: str
    prefix_len: int | None = None
    family: str
    scope: str | None = None

    @computed_field
    @property
    def is_link_local(self) -> bool:
        try:
            return ipaddress.ip_address(self.address).is_link_local
        except ValueError:
            return False


class NetInterface(BaseModel):
    name: str
    state: str | None = None
    mtu: int | None = None
    mac: str | None = None
    flags: list[str] = []
    addresses: list[IpAddress] = []
    altnames: list[str] = []

    @computed_field
    @property
    def has_carrier(self) -> bool | None:
        """False when the kernel says NO-CARRIER (e.g. no cable); None when flags are unknown."""
        return None if not self.flags else "NO-CARRIER" not in self.flags

    @computed_field
    @property
    def link_local_only(self) -> bool:
        """True when the interface has addresses and every one of them is link-local."""
        return bool(self.addresses) and all(addr.is_link_local for addr in self.addresses)


def _address_from_cidr(cidr: str, scope: str | None = None) -> IpAddress:
    address, _, prefix = cidr.partition("/")
    return IpAddress(
        address=address,
        prefix_len=int(prefix) if prefix.isdigit() else None,
        family="inet6" if ":" in address else "inet",
        scope=scope,
    )


def _base_name(name: str) -> str:
    """`veth5b4@if2` → `veth5b4`."""
    return name.split("@", 1)[0]


def parse_ip_j_addr(text: str) -> list[NetInterface]:
    """Read `ip -j addr` (JSON); optional keys may be absent on any interface."""
    try:
        data = json.loads(text)
    except json.JSONDecodeError:
        raise ParseError("`ip -j addr` JSON (an array of interfaces)", text) from None
    if not isinstance(data, list) or not all(
        isinstance(item, dict) and "ifname" in item for item in data
    ):
        raise ParseError("`ip -j addr` JSON objects with 'ifname'", text)
    return [_interface_from_json(item) for item in data]


def _interface_from_json(item: dict[str, Any]) -> NetInterface:
    return NetInterface(
        name=item["ifname"],
        state=item.get("operstate"),
        mtu=item.get("mtu"),
        mac=item.get("address") if _MAC.match(str(item.get("address", ""))) else None,
        flags=list(item.get("flags", [])),
        altnames=list(item.get("altnames", [])),
        addresses=[
            IpAddress(
                address=info["local"],
                prefix_len=info.get("prefixlen"),
                family=info.get("family", "inet6" if ":" in info["local"] else "inet"),
                scope=info.get("scope"),
            )
            for info in item.get("addr_info", [])
            if "local" in info
        ],
    )


def parse_ip_br_addr(text: str) -> list[NetInterface]:
    """Read `ip -br addr`: name, state, then any number of CIDRs (none when DOWN)."""
    interfaces = []
    for words in _brief_rows(text, "ip -br addr"):
        interfaces.append(
            NetInterface(
                name=_base_name(words[0]),
                state=words[1],
                addresses=[_address_from_cidr(cidr) for cidr in words[2:]],
            )
        )
    return interfaces


def parse_ip_br_link(text: str) -> list[NetInterface]:
    """Read `ip -br link`: name, state, MAC, `<FLAGS>`."""
    interfaces = []
    for words in _brief_rows(text, "ip -br link"):
        flags = next((word for word in words[2:] if word.startswith("<")), "<>")
        mac = next((word for word in words[2:] if _MAC.match(word)), None)
        interfaces.append(
            NetInterface(
                name=_base_name(words[0]), state=words[1], mac=mac, flags=_split_flags(flags)
            )
        )
    return interfaces


def _brief_rows(text: str, command: str) -> list[list[str]]:
    rows = [line.split() for line in text.splitlines() if line.strip()]
    if not rows or any(len(words) < 2 or ":" in words[0] for words in rows):
        raise ParseError(f"`{command}` rows like 'NAME  STATE  …'", text)
    return rows


def _split_flags(flags: str) -> list[str]:
    return [flag for flag in flags.strip("<>").split(",") if flag]


_SHOW_HEADER = re.compile(r"^\d+:\s+(?P<name>[^:\s]+):\s+<(?P<flags>[^>]*)>\s*(?P<rest>.*)$")


def parse_ip_addr_show(text: str) -> list[NetInterface]:
    """Read `ip addr show`, `ip link show` or `ip -s link show` (statistics lines are skipped)."""
    interfaces: list[NetInterface] = []
    for line in (raw.strip() for raw in text.splitlines()):
        header = _SHOW_HEADER.match(line)
        if header is not None:
            words = header["rest"].split()
            settings = dict(zip(words[::2], words[1::2], strict=False))
            mtu = settings.get("mtu", "")
            interfaces.append(
                NetInterface(
                    name=_base_name(header["name"]),
                    flags=_split_flags(header["flags"]),
                    mtu=int(mtu) if mtu.isdigit() else None,
                    state=settings.get("state"),
                )
            )
        elif interfaces:
            _add_detail(interfaces[-1], line.split())
    if not interfaces:
        raise ParseError("`ip addr show` output ('N: NAME: <FLAGS> mtu …')", text)
    return interfaces


def _add_detail(interface: NetInterface, words: list[str]) -> None:
    if not words:
        return
    if words[0].startswith("link/") and len(words) > 1 and _MAC.match(words[1]):
        interface.mac = words[1]
    elif words[0] in ("inet", "inet6") and len(words) > 1:
        scope = words[words.index("scope") + 1] if "scope" in words[:-1] else None
        interface.addresses.append(_address_from_cidr(words[1], scope))
    elif words[0] == "altname" and len(words) > 1:
        interface.altnames.append(words[1])
