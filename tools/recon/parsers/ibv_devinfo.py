"""`ibv_devinfo` (plain, without -v): one `hca_id:` block per RDMA device, then its ports.

The fabric facts need the port state and link layer on hosts without DGX OS's `ibdev2netdev`
or `rdma` tools (any host with rdma-core has `ibv_devinfo`). Fields are `key: value` with tabs;
`state:` reads `PORT_ACTIVE (4)`, kept without the number.
"""

from __future__ import annotations

import re

from pydantic import BaseModel

from tools.recon.parsers.errors import ParseError

_HCA = re.compile(r"^hca_id:\s*(?P<name>\S+)")
_PORT = re.compile(r"^port:\s*(?P<number>\d+)")
_FIELD = re.compile(r"^(?P<key>[a-z_]+):\s*(?P<value>.*?)\s*$")


class IbvPort(BaseModel):
    number: int
    state: str | None = None
    link_layer: str | None = None
    active_mtu: str | None = None


class IbvDevice(BaseModel):
    name: str
    transport: str | None = None
    firmware_version: str | None = None
    vendor_part_id: str | None = None
    board_id: str | None = None
    ports: list[IbvPort] = []


_DEVICE_FIELDS = {
    "transport": "transport",
    "fw_ver": "firmware_version",
    "vendor_part_id": "vendor_part_id",
    "board_id": "board_id",
}


def parse_ibv_devinfo(text: str) -> list[IbvDevice]:
    """Every device block with its ports; fields not read here are skipped."""
    devices: list[IbvDevice] = []
    for line in (raw.strip() for raw in text.splitlines()):
        if hca := _HCA.match(line):
            devices.append(IbvDevice(name=hca["name"]))
        elif devices and (port := _PORT.match(line)):
            devices[-1].ports.append(IbvPort(number=int(port["number"])))
        elif devices and (field := _FIELD.match(line)):
            key, value = field["key"], field["value"]
            if devices[-1].ports and key in ("state", "link_layer", "active_mtu"):
                setattr(devices[-1].ports[-1], key, value.split(" (")[0])
            elif not devices[-1].ports and key in _DEVICE_FIELDS:
                setattr(devices[-1], _DEVICE_FIELDS[key], value)
    if not devices:
        raise ParseError("`ibv_devinfo` blocks starting 'hca_id: <device>'", text)
    return devices
