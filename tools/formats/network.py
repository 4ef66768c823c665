"""Network formats: `ip` in its JSON, full and brief forms (addresses, links, link statistics)
and `lspci`. A link without carrier is a finding: nothing is plugged into that port."""

from __future__ import annotations

from tools.formats.format import Format, Told, sign
from tools.recon.parsers.network import (
    NetInterface,
    parse_ip_addr_show,
    parse_ip_br_addr,
    parse_ip_br_link,
    parse_ip_j_addr,
)


def _told(interfaces: list[NetInterface]) -> Told:
    facts: dict[str, object] = {}
    findings = []
    for interface in interfaces:
        parts = [interface.state or "?"]
        if interface.mtu:
            parts.append(f"mtu {interface.mtu}")
        parts += [f"{a.address}/{a.prefix_len}" for a in interface.addresses]
        if interface.has_carrier is False:
            parts.append("no carrier")
            findings.append(f"{interface.name} has no carrier: no cable or no link partner")
        facts[interface.name] = " ".join(parts)
    return facts, findings


def _read_lspci(text: str) -> Told:
    rows = [line.split(" ", 1) for line in text.splitlines() if ":" in line and " " in line]
    facts: dict[str, object] = {slot: device.strip() for slot, device in rows}
    return facts, []


FORMATS = (
    Format("ip -j addr", (sign(r'^\[\{"ifindex":'),), lambda text: _told(parse_ip_j_addr(text))),
    Format(
        "ip addr show / ip -s link",
        (
            sign(r"^\s*\d+: \S+: <[A-Z_,-]*> mtu \d+"),
            sign(r"^\s+link/\w+ ", 0.3),
            sign(r"^\s+RX:\s+bytes\s+packets", 0.3),
        ),
        lambda text: _told(parse_ip_addr_show(text)),
    ),
    Format(
        "ip -br link",
        (sign(r"^\S+\s+(?:UP|DOWN|UNKNOWN)\s+(?:[0-9a-f]{2}:){5}[0-9a-f]{2}\s+<"),),
        lambda text: _told(parse_ip_br_link(text)),
    ),
    Format(
        "ip -br addr",
        (sign(r"^\S+\s+(?:UP|DOWN|UNKNOWN)\s+[0-9a-f.:]+/\d+"),),
        lambda text: _told(parse_ip_br_addr(text)),
    ),
    Format(
        "lspci",
        (sign(r"^(?:[0-9a-f]{4}:)?[0-9a-f]{2}:[0-9a-f]{2}\.\d (?:[\w ]+controller|Bridge)"),),
        _read_lspci,
    ),
)
