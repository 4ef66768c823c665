"""`ibv_devinfo -v` GID tables: which index is each RDMA port's RoCEv2 IPv4 entry.

NCCL picks a RoCE GID by NCCL_IB_GID_INDEX; the one that works across nodes is the RoCE v2
entry of the port's IPv4 address (one user's Sparks had it at 5 while 3 was an IPv6 link-local
that hung, docs/sources.md §9). rdma-core's devinfo.c prints `hca_id:\tDEV` per device
and, per port, `GID[  N]:\t\tGID, TYPE` with TYPE `RoCE v1` / `RoCE v2` on Ethernet ports; a
RoCE v2 entry is written by inet_ntop (`::ffff:192.168.100.10`), a v1 entry in hex.
"""

import ipaddress
import re

from pydantic import BaseModel

_HCA = re.compile(r"^hca_id:\s*(?P<dev>\S+)")
_GID = re.compile(r"^GID\[\s*(?P<index>\d+)\]:\s*(?P<gid>[0-9A-Fa-f:.]+)(?:,\s*(?P<type>.+?))?\s*$")


class RoceGid(BaseModel):
    """A RoCE v2 GID of an IPv4 address: the device, the table index and the address."""

    device: str
    index: int
    ipv4: str


def parse_ibv_gids(text: str) -> list[RoceGid]:
    """Every RoCE v2 entry whose GID is an IPv4-mapped address, in the order printed."""
    found: list[RoceGid] = []
    device: str | None = None
    for raw in text.splitlines():
        line = raw.strip()
        if match := _HCA.match(line):
            device = match["dev"]
            continue
        match = _GID.match(line)
        if match is None or device is None or (match["type"] or "").strip() != "RoCE v2":
            continue
        gid = match["gid"]
        try:
            address = ipaddress.IPv6Address(gid)
        except ValueError:
            continue
        if address.ipv4_mapped is not None:
            found.append(
                RoceGid(device=device, index=int(match["index"]), ipv4=str(address.ipv4_mapped))
            )
    return found
