"""How a NIC's admin state and cable turn into operstate, flags and visible addresses."""

from __future__ import annotations

from typing import Any


def carrier(nic: dict[str, Any]) -> bool:
    return nic["kind"] == "loopback" or (nic["up"] and nic["cable"])


def operstate(nic: dict[str, Any]) -> str:
    if nic["kind"] == "loopback":
        return "UNKNOWN"
    return "UP" if carrier(nic) else "DOWN"


def flags(nic: dict[str, Any]) -> list[str]:
    if nic["kind"] == "loopback":
        return ["LOOPBACK", "UP", "LOWER_UP"]
    if not nic["up"]:
        return ["BROADCAST", "MULTICAST"]
    if not nic["cable"]:
        return ["NO-CARRIER", "BROADCAST", "MULTICAST", "UP"]
    return ["BROADCAST", "MULTICAST", "UP", "LOWER_UP"]


def link_local(mac: str) -> str:
    """The EUI-64 fe80:: address the kernel derives from a MAC."""
    octets = [int(part, 16) for part in mac.split(":")]
    octets[0] ^= 0x02
    eui = [*octets[:3], 0xFF, 0xFE, *octets[3:]]
    groups = [f"{eui[i] << 8 | eui[i + 1]:x}" for i in range(0, 8, 2)]
    return "fe80::" + ":".join(groups) + "/64"


def visible_addresses(nic: dict[str, Any]) -> list[str]:
    """Addresses `ip addr` shows: without carrier a NIC loses them, bridges keep theirs."""
    if nic["kind"] in ("loopback", "bridge"):
        return list(nic["addresses"])
    if not carrier(nic):
        return []
    extra = [link_local(nic["mac"])] if nic["link_local_v6"] else []
    return [*nic["addresses"], *extra]


def rdma_nics(state: dict[str, Any]) -> list[tuple[str, dict[str, Any]]]:
    """ConnectX-7 netdevs with an RDMA device, in PCI order (rocep1s0f0 first)."""
    found = [(name, nic) for name, nic in state["nics"].items() if nic.get("rdma_dev")]
    return sorted(found, key=lambda item: item[1]["pci"] or "")
