"""The cluster as one host sees it: its peers' states, which addresses it can reach, what NCCL
would pick. Hosts are sibling folders, so a fake tool reads a peer's state like the network would
let it; nothing leaves the machine.
"""

from __future__ import annotations

import ipaddress
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from .links import carrier, rdma_nics, visible_addresses
from .state import STATE_FILE, read_state

Nic = tuple[str, dict[str, Any]]


def hosts(host_dir: Path) -> Iterator[tuple[Path, dict[str, Any]]]:
    """Every host of the cluster (this one included) with its current state."""
    for path in sorted(host_dir.parent.iterdir()):
        if (path / STATE_FILE).is_file():
            yield path, read_state(path)


def _v4(nic: dict[str, Any]) -> list[ipaddress.IPv4Interface]:
    found = []
    for cidr in visible_addresses(nic):
        iface = ipaddress.ip_interface(cidr)
        if isinstance(iface, ipaddress.IPv4Interface) and not iface.ip.is_loopback:
            found.append(iface)
    return found


def local_ips(state: dict[str, Any]) -> dict[str, str]:
    """IPv4 address → netdev for every address this host shows now (carrier needed)."""
    return {str(i.ip): name for name, nic in state["nics"].items() for i in _v4(nic)}


def primary_ip(state: dict[str, Any]) -> str:
    """The address Ray or vLLM pick when told nothing: the first wired ethernet address."""
    for nic in state["nics"].values():
        if nic["kind"] == "ethernet" and _v4(nic):
            return str(_v4(nic)[0].ip)
    return "127.0.0.1"


def is_down(state: dict[str, Any]) -> bool:
    """The host is marked down (scenario `faults.down`, or `SimCluster.inject(down=True)`): it is
    powered off, so it answers on none of its addresses."""
    return bool(state.get("faults", {}).get("down"))


def owner_of(host_dir: Path, ip: str) -> tuple[Path, dict[str, Any]] | None:
    """The host that currently answers on `ip`, if any (a host that is down answers on none)."""
    for path, state in hosts(host_dir):
        if ip in local_ips(state) and not is_down(state):
            return path, state
    return None


def reachable(state: dict[str, Any], host_dir: Path, ip: str) -> bool:
    """Whether this host can reach `ip`: itself, or a peer on a subnet both ends have up."""
    if ip in local_ips(state):
        return True
    target = ipaddress.ip_address(ip)
    routed = any(target in i.network for nic in state["nics"].values() for i in _v4(nic))
    return routed and owner_of(host_dir, ip) is not None


def peer_at(state: dict[str, Any], host_dir: Path, address: str) -> Path | None:
    """The other host that answers on `address` (an IP this host can reach, or a hostname)."""
    for path, peer in hosts(host_dir):
        if path != host_dir and address == peer["hostname"]:
            address = primary_ip(peer)
    try:
        ipaddress.ip_address(address)
    except ValueError:
        return None
    owner = owner_of(host_dir, address)
    if owner is None or owner[0] == host_dir or not reachable(state, host_dir, address):
        return None
    return owner[0]


def socket_ifname_problem(value: str | None, state: dict[str, Any]) -> str | None:
    """Why NCCL/Gloo would find no interface for `value` (NCCL_SOCKET_IFNAME syntax), or None."""
    if not value:
        return None
    exclude, exact = value.startswith("^"), "=" in value[:2]
    names = [n for n in value.lstrip("^=").split(",") if n]

    def matches(dev: str) -> bool:
        return any(dev == n if exact else dev.startswith(n) for n in names)

    usable = [
        dev
        for dev, nic in state["nics"].items()
        if nic["kind"] != "loopback" and _v4(nic) and matches(dev) != exclude
    ]
    return None if usable else f"no interface matching {value} is up with an IPv4 address"


def oob_interface(env: dict[str, str], state: dict[str, Any], ip: str) -> str:
    """The netdev NCCL bootstraps over: the socket ifname if set, else the one holding `ip`."""
    wanted = env.get("NCCL_SOCKET_IFNAME", "").lstrip("^=").split(",")[0]
    return wanted or local_ips(state).get(ip, "enP7s7")


def usable_rdma(env: dict[str, str], container: dict[str, Any], state: dict[str, Any]) -> list[Nic]:
    """RoCE ports NCCL can use in this container: devices passed in, allowed, with carrier."""
    passed = container.get("privileged") or any(
        d.split(":")[0] == "/dev/infiniband" for d in container.get("devices", [])
    )
    if not passed or env.get("NCCL_IB_DISABLE", "0") == "1":
        return []
    hca = env.get("NCCL_IB_HCA", "")
    wanted = [h.split(":")[0] for h in hca.lstrip("^=").split(",") if h]
    return [
        (name, nic)
        for name, nic in rdma_nics(state)
        if carrier(nic)
        and _v4(nic)
        and (not wanted or any(nic["rdma_dev"].startswith(w) for w in wanted))
    ]
