"""Interfaces, addresses and link speed: is the CX-7 link usable between the two Sparks?"""

import re

import pytest

from tests.support.captures import capture
from tools.recon.parsers import (
    ParseError,
    parse_ethtool,
    parse_ip_j_addr,
)

PROMPT = re.compile(r"^\S+@\S+:\S*\$ .*$", re.MULTILINE)


def outputs_after_prompts(text: str) -> list[str]:
    """Split a pasted terminal session (`user@host:~$ cmd` lines) into each command's output."""
    return [chunk for chunk in PROMPT.split(text) if chunk.strip()]


def test_ip_j_addr() -> None:
    interfaces = {i.name: i for i in parse_ip_j_addr(capture("generic_ip_j_addr.json.txt"))}
    assert list(interfaces) == ["lo", "enp0s31f6", "wlan0", "wg0", "wwan0", "tun0", "tun1"]
    wired = interfaces["enp0s31f6"]
    assert (wired.state, wired.mtu, wired.mac) == ("UP", 1500, "54:e1:ad:5f:24:b4")
    assert [(a.address, a.prefix_len, a.is_link_local) for a in wired.addresses] == [
        ("192.168.178.62", 24, False),
        ("2001:9e8:a19f:1c00:56e1:adff:fe5f:24b4", 64, False),
        ("fe80::56e1:adff:fe5f:24b4", 64, True),
    ]
    assert interfaces["wwan0"].addresses == []
    assert interfaces["tun1"].addresses == []


def test_ip_j_addr_rejects_text_output() -> None:
    with pytest.raises(ParseError, match="ip -j addr"):
        parse_ip_j_addr(capture("spark_ip_br_addr_linklocal.txt"))


def test_ethtool_speed_100g_then_200g() -> None:
    outputs = outputs_after_prompts(capture("spark_ethtool_speed_100G_vs_200G.txt"))
    assert [parse_ethtool(output).speed_mbps for output in outputs] == [
        100000,
        100000,
        200000,
        200000,
    ]


def test_ethtool_without_link() -> None:
    text = (
        "Settings for enp1s0f0np0:\n\tSupported ports: [ FIBRE ]\n\tSpeed: Unknown!\n"
        "\tDuplex: Unknown! (255)\n\tAuto-negotiation: on\n\tPort: Other\n\tLink detected: no\n"
    )
    info = parse_ethtool(text)
    assert (info.interface, info.speed_mbps, info.link_detected) == ("enp1s0f0np0", None, False)
    assert info.auto_negotiation is True


def test_ethtool_with_link() -> None:
    text = "Settings for enp1s0f1np1:\n\tSpeed: 200000Mb/s\n\tDuplex: Full\n\tLink detected: yes\n"
    info = parse_ethtool(text)
    assert (info.speed_mbps, info.duplex, info.link_detected) == (200000, "Full", True)


def test_ethtool_rejects_other_text() -> None:
    with pytest.raises(ParseError, match="ethtool"):
        parse_ethtool("netlink error: no device matches name (offset 24)")
