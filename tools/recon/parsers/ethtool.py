"""`ethtool <if>` (speed, duplex, link) and `ethtool --show-fec <if>`.

A Spark pair through a switch that negotiated 100G instead of 200G shows up as `speed_mbps`.
"""

import re

from pydantic import BaseModel

from tools.recon.parsers.errors import ParseError

_SETTINGS_HEADER = re.compile(r"^Settings for (?P<name>\S+):$")
_FEC_HEADER = re.compile(r"^FEC parameters for (?P<name>\S+):$")
_SPEED = re.compile(r"^(?P<number>\d+)\s*Mb/s$")


class EthtoolInfo(BaseModel):
    interface: str | None = None
    speed_mbps: int | None = None
    duplex: str | None = None
    auto_negotiation: bool | None = None
    port: str | None = None
    link_detected: bool | None = None


def _key_values(text: str) -> list[tuple[str, str]]:
    pairs = []
    for line in text.splitlines():
        key, sep, value = line.strip().partition(":")
        if sep:
            pairs.append((key.strip(), value.strip()))
    return pairs


def _yes_no(value: str | None) -> bool | None:
    return {"yes": True, "on": True, "no": False, "off": False}.get((value or "").lower())


def parse_ethtool(text: str) -> EthtoolInfo:
    """Read `ethtool <if>` (whole or grepped); `Unknown!` speed (no link) gives None."""
    header = next(
        (m for m in (_SETTINGS_HEADER.match(line.strip()) for line in text.splitlines()) if m),
        None,
    )
    values = dict(_key_values(text))
    known = {"Speed", "Duplex", "Link detected", "Auto-negotiation", "Port"}
    if header is None and not known & values.keys():
        raise ParseError("`ethtool <interface>` output ('Speed:', 'Link detected:')", text)
    speed = _SPEED.match(values.get("Speed", ""))
    duplex = values.get("Duplex")
    return EthtoolInfo(
        interface=header["name"] if header else None,
        speed_mbps=int(speed["number"]) if speed else None,
        duplex=None if duplex in (None, "Unknown!") else duplex,
        auto_negotiation=_yes_no(values.get("Auto-negotiation")),
        port=values.get("Port"),
        link_detected=_yes_no(values.get("Link detected")),
    )


class EthtoolFec(BaseModel):
    """`active_encoding` is as printed: `RS`, `BaseR`, or the word `None` (FEC off)."""

    interface: str | None = None
    configured_encodings: list[str] = []
    active_encoding: str | None = None


def parse_ethtool_fec(text: str) -> EthtoolFec:
    """Read `ethtool --show-fec <if>`."""
    header = next(
        (m for m in (_FEC_HEADER.match(line.strip()) for line in text.splitlines()) if m), None
    )
    values = dict(_key_values(text))
    configured = values.get(
        "Supported/Configured FEC encodings", values.get("Configured FEC encodings")
    )
    active = values.get("Active FEC encoding", values.get("Active FEC encodings"))
    if configured is None and active is None:
        raise ParseError("`ethtool --show-fec` output ('Active FEC encoding:')", text)
    return EthtoolFec(
        interface=header["name"] if header else None,
        configured_encodings=(configured or "").split(),
        active_encoding=active,
    )
