"""The RoCE fabric: RDMA ports (`rdma link`, else `ibdev2netdev`) and the interfaces under them."""

from __future__ import annotations

from tools.recon import parsers as p
from tools.recon.facts import (
    Interface,
    NetworkFacts,
    RdmaFacts,
    RdmaPort,
)
from tools.recon.readers.section_reader import SectionReader


def read_rdma(reader: SectionReader) -> RdmaFacts:
    group = RdmaFacts()
    links = reader.read(group, "rdma-link", p.parse_rdma_link_show)
    if links:
        group.ports = [
            RdmaPort(
                device=link.device,
                port=link.port,
                state=link.state,
                physical_state=link.physical_state,
                netdev=link.netdev,
                up=link.is_up,
            )
            for link in links
        ]
        return group
    entries = reader.read(group, "ibdev2netdev", p.parse_ibdev2netdev) or []
    group.ports = [
        RdmaPort(device=e.device, port=e.port, state=e.state, netdev=e.netdev, up=e.is_up)
        for e in entries
    ]
    return group


def read_network(reader: SectionReader, rdma: RdmaFacts) -> NetworkFacts:
    group = NetworkFacts()
    fabric = {port.netdev for port in rdma.ports if port.netdev}
    interfaces = reader.read(group, "ip-addr", p.parse_ip_j_addr) or []
    for nic in interfaces:
        if nic.name == "lo" or nic.name.startswith(("veth", "br-", "docker")):
            continue
        speed = None
        ethtool_name = f"ethtool {nic.name}"
        if ethtool_name in reader.sections:
            info = reader.read(group, ethtool_name, p.parse_ethtool)
            speed = info.speed_mbps if info else None
        group.interfaces.append(
            Interface(
                name=nic.name,
                state=nic.state,
                mtu=nic.mtu,
                addresses=[f"{a.address}/{a.prefix_len}" for a in nic.addresses],
                speed_mbps=speed,
                fabric=nic.name in fabric,
                link_local_only=nic.link_local_only,
                carrier=nic.has_carrier if "UP" in nic.flags else None,
            )
        )
    return group
