"""RDMA views of the ConnectX-7 ports: `ibdev2netdev`, `ibstat`, `rdma link show`.

Device names differ by stack (`rocep1s0f1` on stock DGX OS, `mlx5_0` with MLNX_OFED/DOCA) and
line order is not guaranteed, so nothing here depends on either.
"""

import re

from pydantic import BaseModel, computed_field

from tools.recon.parsers.errors import ParseError
from tools.recon.parsers.units import parse_optional_float, parse_optional_int

_IBDEV2NETDEV = re.compile(
    r"^(?P<device>\S+)\s+port\s+(?P<port>\d+)\s+==>\s+(?P<netdev>\S+)\s+\((?P<state>\w+)\)$"
)


class IbDevNetDev(BaseModel):
    device: str
    port: int
    netdev: str
    state: str

    @computed_field
    @property
    def is_up(self) -> bool:
        return self.state.lower() == "up"


def parse_ibdev2netdev(text: str) -> list[IbDevNetDev]:
    """Read `ibdev2netdev`; no output means no RDMA devices (possibly no cable on a Spark)."""
    entries = []
    for line in text.splitlines():
        if not line.strip():
            continue
        match = _IBDEV2NETDEV.match(line.strip())
        if match is None:
            raise ParseError("`ibdev2netdev` lines like 'DEV port N ==> NETDEV (Up)'", line)
        entries.append(
            IbDevNetDev(
                device=match["device"],
                port=int(match["port"]),
                netdev=match["netdev"],
                state=match["state"],
            )
        )
    return entries


class IbPort(BaseModel):
    """One port; `state` and `physical_state` are kept as printed, even when they disagree."""

    number: int
    state: str | None = None
    physical_state: str | None = None
    rate_gbps: float | None = None
    base_lid: int | None = None
    sm_lid: int | None = None
    port_guid: str | None = None
    link_layer: str | None = None


class IbCa(BaseModel):
    name: str
    ca_type: str | None = None
    port_count: int | None = None
    firmware_version: str | None = None
    hardware_version: str | None = None
    node_guid: str | None = None
    ports: list[IbPort] = []


_CA_HEADER = re.compile(r"^CA '(?P<name>[^']+)'$")
_PORT_HEADER = re.compile(r"^Port (?P<number>\d+):$")
_CA_FIELDS = {
    "CA type": "ca_type",
    "Firmware version": "firmware_version",
    "Hardware version": "hardware_version",
    "Node GUID": "node_guid",
}


def parse_ibstat(text: str) -> list[IbCa]:
    """Read `ibstat`: one entry per CA, each with its ports."""
    cas: list[IbCa] = []
    port: IbPort | None = None
    for line in (raw.strip() for raw in text.splitlines()):
        ca_header, port_header = _CA_HEADER.match(line), _PORT_HEADER.match(line)
        if ca_header:
            cas.append(IbCa(name=ca_header["name"]))
            port = None
        elif port_header and cas:
            port = IbPort(number=int(port_header["number"]))
            cas[-1].ports.append(port)
        elif cas and ":" in line:
            key, _, value = (part.strip() for part in line.partition(":"))
            _set_ibstat_field(cas[-1], port, key, value)
    if not cas:
        raise ParseError("`ibstat` output with \"CA '<name>'\" blocks", text)
    return cas


def _set_ibstat_field(ca: IbCa, port: IbPort | None, key: str, value: str) -> None:
    if port is None:
        if key in _CA_FIELDS:
            setattr(ca, _CA_FIELDS[key], value)
        elif key == "Number of ports":
            ca.port_count = parse_optional_int(value)
        return
    if key == "State":
        port.state = value
    elif key == "Physical state":
        port.physical_state = value
    elif key == "Rate":
        port.rate_gbps = parse_optional_float(value)
    elif key == "Base lid":
        port.base_lid = parse_optional_int(value)
    elif key == "SM lid":
        port.sm_lid = parse_optional_int(value)
    elif key == "Port GUID":
        port.port_guid = value
    elif key == "Link layer":
        port.link_layer = value


class RdmaLink(BaseModel):
    """One `rdma link show` line; `state` and `physical_state` may disagree (kept as printed)."""

    device: str
    port: int
    state: str | None = None
    physical_state: str | None = None
    netdev: str | None = None
    attributes: dict[str, str] = {}

    @computed_field
    @property
    def is_up(self) -> bool:
        """Usable: the port is ACTIVE and the physical link is up (either alone is not enough)."""
        return self.state == "ACTIVE" and self.physical_state == "LINK_UP"


_LINK_HEADER = re.compile(r"^link\s+(?P<device>[^/\s]+)/(?P<port>\d+)\s*(?P<rest>.*)$")


def parse_rdma_link_show(text: str) -> list[RdmaLink]:
    """Read `rdma link show`, taking each field by its key (`state X`, `netdev Y`, …)."""
    links = []
    for line in text.splitlines():
        if not line.strip():
            continue
        match = _LINK_HEADER.match(line.strip())
        if match is None:
            raise ParseError("`rdma link show` lines like 'link DEV/PORT state …'", line)
        words = match["rest"].split()
        attributes = dict(zip(words[::2], words[1::2], strict=False))
        links.append(
            RdmaLink(
                device=match["device"],
                port=int(match["port"]),
                state=attributes.pop("state", None),
                physical_state=attributes.pop("physical_state", None),
                netdev=attributes.pop("netdev", None),
                attributes=attributes,
            )
        )
    return links
