"""The address guard's classification and allow-list; no traffic leaves the machine here."""

from __future__ import annotations

import ipaddress
import socket

import httpx
import pytest

from tools.web.errors import BadURLError, RefusedError, ResolveError
from tools.web.ssrf import AddressGuard, classify


@pytest.mark.parametrize(
    ("address", "reason"),
    [
        ("127.0.0.1", "a loopback address"),
        ("127.8.9.10", "a loopback address"),
        ("::1", "a loopback address"),
        ("10.1.2.3", "a private address"),
        ("172.16.0.1", "a private address"),
        ("172.31.255.254", "a private address"),
        ("192.168.100.10", "a private address"),
        ("fd12:3456::1", "a private address"),
        ("169.254.1.1", "a link-local address"),
        ("fe80::1", "a link-local address"),
        ("169.254.169.254", "a cloud metadata address"),
        ("fd00:ec2::254", "a cloud metadata address"),
        ("224.0.0.251", "a multicast address"),
        ("ff02::1", "a multicast address"),
        ("0.0.0.0", "an unspecified address"),
        ("::", "an unspecified address"),
        ("100.64.0.1", "a shared (CGNAT) address"),
        ("100.127.255.254", "a shared (CGNAT) address"),
        ("::ffff:10.0.0.1", "a private address (10.0.0.1 inside an IPv4-mapped address)"),
        ("64:ff9b::a9fe:a9fe", "a cloud metadata address (169.254.169.254 inside a NAT64 address)"),
        ("240.0.0.1", "a reserved address"),
        # IPv6 forms that translate to, tunnel to or embed a refused IPv4 address
        ("::127.0.0.1", "a loopback address (127.0.0.1 inside an IPv4-compatible address)"),
        ("::ffff:0:7f00:1", "a loopback address (127.0.0.1 inside an IPv4-translated address)"),
        (
            "::ffff:0:192.168.0.1",
            "a private address (192.168.0.1 inside an IPv4-translated address)",
        ),
        ("64:ff9b:1::a00:1", "a local-use NAT64 address"),
        ("64:ff9b:1:ffff::8.8.8.8", "a local-use NAT64 address"),
        ("2002:7f00:1::", "a loopback address (127.0.0.1 inside a 6to4 address)"),
        ("2002:a00:1::1", "a private address (10.0.0.1 inside a 6to4 address)"),
        ("2002:a9fe:a9fe::", "a cloud metadata address (169.254.169.254 inside a 6to4 address)"),
        # Teredo: server 65.54.227.120, client 192.168.0.1 (stored inverted: 3f57:fffe)
        (
            "2001:0:4136:e378:8000:63bf:3f57:fffe",
            "a private address (192.168.0.1 inside a Teredo address)",
        ),
        ("2001:0:4136:e378:8000:63bf:f7f7:f7f7", "a reserved address"),  # Teredo of 8.8.8.8
    ],
)
def test_off_limits_addresses_say_why(address: str, reason: str) -> None:
    assert classify(ipaddress.ip_address(address)) == reason


@pytest.mark.parametrize(
    "address",
    [
        "8.8.8.8",
        "172.32.0.1",
        "100.128.0.1",
        "2606:4700::1111",
        "::ffff:1.1.1.1",
        "2002:808:808::1",  # 6to4 of a public address
        "64:ff9b::808:808",  # well-known NAT64 of a public address
    ],
)
def test_public_addresses_pass(address: str) -> None:
    assert classify(ipaddress.ip_address(address)) is None


def resolver_for(table: dict[str, list[str]]):
    async def resolve(host: str, port: int) -> list[str]:
        if host not in table:
            raise socket.gaierror(socket.EAI_NONAME, "Name or service not known")
        return table[host]

    return resolve


async def test_literal_private_address_is_refused_with_advice() -> None:
    with pytest.raises(RefusedError) as refused:
        await AddressGuard().check(httpx.URL("http://10.1.2.3/"))
    assert str(refused.value) == (
        "refused: 10.1.2.3 is a private address; allow it in settings if you really mean it"
    )


async def test_name_resolving_to_a_private_address_is_refused() -> None:
    guard = AddressGuard(resolve=resolver_for({"docs.example": ["93.184.215.14", "10.0.0.7"]}))
    with pytest.raises(RefusedError) as refused:
        await guard.check(httpx.URL("https://docs.example/guide"))
    assert str(refused.value).startswith(
        "refused: docs.example resolves to 10.0.0.7, a private address;"
    )


async def test_public_name_returns_its_addresses_in_order() -> None:
    guard = AddressGuard(resolve=resolver_for({"docs.example": ["93.184.215.14", "2606::1"]}))
    addresses = await guard.check(httpx.URL("https://docs.example/"))
    assert [str(a) for a in addresses] == ["93.184.215.14", "2606::1"]


async def test_allow_list_by_name_and_by_network() -> None:
    table = {"lab.internal": ["10.20.0.5"], "other.internal": ["10.30.0.5"]}
    guard = AddressGuard(["LAB.internal", "192.168.0.0/16"], resolve=resolver_for(table))
    assert [str(a) for a in await guard.check(httpx.URL("http://lab.internal/"))] == ["10.20.0.5"]
    assert await guard.check(httpx.URL("http://192.168.4.4:8000/"))
    with pytest.raises(RefusedError):
        await guard.check(httpx.URL("http://other.internal/"))
    with pytest.raises(RefusedError):
        await guard.check(httpx.URL("http://10.20.0.5/"))  # the name is allowed, not its address


async def test_unknown_host_is_a_resolve_error() -> None:
    guard = AddressGuard(resolve=resolver_for({}))
    with pytest.raises(ResolveError) as failed:
        await guard.check(httpx.URL("https://no-such-host.example/"))
    assert str(failed.value) == (
        "could not resolve host 'no-such-host.example' (Name or service not known); "
        "check the spelling of the URL"
    )


async def test_other_schemes_are_refused() -> None:
    with pytest.raises(BadURLError, match="only http and https"):
        await AddressGuard().check(httpx.URL("ftp://example.com/file"))
