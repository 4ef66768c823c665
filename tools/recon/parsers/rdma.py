"""RDMA views of the ConnectX-7 ports: `ibdev2netdev` and `rdma link show`.

Device names differ by stack (`rocep1s0f1` on stock DGX OS, `mlx5_0` with MLNX_OFED/DOCA) and
line order is not guaranteed, so nothing here depends on either.
"""

from __future__ import annotations

import re

from pydantic import BaseModel, Field, computed_field

from tools.recon.parsers.errors import ParseError

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


class RdmaLink(BaseModel):
    """One `rdma link show` line; `state` and `physical_state` may disagree (kept as printed)."""

    device: str
    port: int
    state: str | None = None
    physical_state: str | None = None
    netdev: str | None = None
    attributes: dict[str, str] = Field(default_factory=dict)

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
