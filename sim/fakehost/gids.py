"""`ibv_devinfo -v`: each RDMA device, its port and the port's GID table.

The format is rdma-core's (libibverbs/examples/devinfo.c, print_formated_gid): on an Ethernet
(RoCE) port a RoCE v1 entry prints the 16 bytes in hex and a RoCE v2 entry the address as
inet_ntop writes it, each followed by `, RoCE v1` / `, RoCE v2`; an InfiniBand port prints hex
with no type. The table's order is the kernel's (drivers/infiniband/core/roce_gid_mgmt.c adds a
v1 and a v2 entry per address): the netdev's fe80:: link-local first (indexes 0 and 1), then
each IPv4 address (2 and 3 for the first), so the RoCEv2 IPv4 entry sits at 3 as NVIDIA's
perftest header shows (`GID index : 3`, docs/sources.md §2.7); a scenario's NIC may list
`extra_gids` IPv6 addresses that come before it (one user's Sparks had it at 5, §9).
"""

from __future__ import annotations

import ipaddress
from typing import Any

from .links import carrier, link_local, rdma_nics


def _hex(address: ipaddress.IPv6Address) -> str:
    raw = address.packed
    return ":".join(f"{raw[i]:02x}{raw[i + 1]:02x}" for i in range(0, 16, 2))


def gid_table(nic: dict[str, Any]) -> list[tuple[ipaddress.IPv6Address, str]]:
    """(GID, type) in index order; a port without carrier keeps only its link-local entries."""
    if nic["kind"] == "ib":  # the port GUID (8 bytes) under the default subnet prefix
        octets = nic["mac"].split(":")
        guid = ":".join(octets[i] + octets[i + 1] for i in range(0, len(octets), 2))
        return [(ipaddress.IPv6Address(f"fe80::{guid}"), "")]
    local = ipaddress.IPv6Address(link_local(nic["mac"]).split("/")[0])
    table = [(local, "RoCE v1"), (local, "RoCE v2")]
    if not carrier(nic):
        return table
    extra = [ipaddress.IPv6Address(a) for a in nic.get("extra_gids", [])]
    mapped = [
        ipaddress.IPv6Address(f"::ffff:{cidr.split('/')[0]}")
        for cidr in nic["addresses"]
        if ":" not in cidr
    ]
    for address in [*extra, *mapped]:
        table += [(address, "RoCE v1"), (address, "RoCE v2")]
    return table


def run_ibv_devinfo(args: list[str], state: dict[str, Any]) -> int:
    for _name, nic in sorted(rdma_nics(state), key=lambda item: item[1]["rdma_dev"]):
        up = carrier(nic)
        layer = "InfiniBand" if nic["kind"] == "ib" else "Ethernet"
        print(f"hca_id:\t{nic['rdma_dev']}")
        print("\ttransport:\t\t\tInfiniBand (0)")
        print("\t\tport:\t1")
        print(f"\t\t\tstate:\t\t\t{'PORT_ACTIVE (4)' if up else 'PORT_DOWN (1)'}")
        print(f"\t\t\tlink_layer:\t\t{layer}")
        if "-v" not in args:
            print()
            continue
        for index, (gid, kind) in enumerate(gid_table(nic)):
            text = str(gid) if kind == "RoCE v2" else _hex(gid)
            if gid.ipv4_mapped is not None and kind == "RoCE v2":
                text = f"::ffff:{gid.ipv4_mapped}"
            suffix = f", {kind}" if kind else ""
            print(f"\t\t\tGID[{index:3d}]:\t\t{text}{suffix}")
        print()
    return 0
