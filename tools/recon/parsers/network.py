"""Interfaces and addresses from `ip -j addr`.

Link-local addresses (169.254.0.0/16, fe80::/10) are flagged: a CX-7 port with only those has no
usable address for NCCL/Ray between two Sparks.
"""

from __future__ import annotations

import ipaddress
import json
import re
from typing import Any

from pydantic import BaseModel, Field, computed_field

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
    flags: list[str] = Field(default_factory=list)
    addresses: list[IpAddress] = Field(default_factory=list)
    altnames: list[str] = Field(default_factory=list)

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
