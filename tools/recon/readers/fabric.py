"""The RoCE fabric: RDMA ports (`rdma link`, else `ibdev2netdev`), the interfaces under them, and
the benchmarks that can measure it (nccl-tests, perftest)."""

from __future__ import annotations

from tools.recon import parsers as p
from tools.recon.readers.section_reader import SectionReader
from tools.world.facts import (
    FabricTestFacts,
    Interface,
    NetworkFacts,
    RdmaFacts,
    RdmaPort,
    RoceGidEntry,
)


def read_rdma(reader: SectionReader) -> RdmaFacts:
    """Ports from `rdma link`, their netdevs from `ibdev2netdev` where `rdma link` names none:
    before Linux 6.7 it does not name an InfiniBand port's IPoIB netdev (see sim/fakehost/rdma.py),
    while ibdev2netdev always does. The RoCE v2 IPv4 GIDs from `ibv_devinfo -v`."""
    group = _ports(reader)
    if "ibv-gids" in reader.sections:
        gids = reader.read(group, "ibv-gids", p.parse_ibv_gids) or []
        group.roce_v2_ipv4_gids = [RoceGidEntry(**g.model_dump()) for g in gids]
    return group


def _ports(reader: SectionReader) -> RdmaFacts:
    group = RdmaFacts()
    links = reader.read(group, "rdma-link", p.parse_rdma_link_show)
    if links:
        netdevs = {}
        if any(link.netdev is None for link in links):
            entries = reader.read(group, "ibdev2netdev", p.parse_ibdev2netdev) or []
            netdevs = {(e.device, e.port): e.netdev for e in entries}
        group.ports = [
            RdmaPort(
                device=link.device,
                port=link.port,
                state=link.state,
                physical_state=link.physical_state,
                netdev=link.netdev or netdevs.get((link.device, link.port)),
                up=link.is_up,
                link_layer=_link_layer(link),
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


def _link_layer(link: p.RdmaLink) -> str | None:
    """An InfiniBand port has a LID in `rdma link`; a RoCE port names its Ethernet netdev."""
    if "lid" in link.attributes:
        return "InfiniBand"
    return "Ethernet" if link.netdev else None


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


def read_fabric_tests(reader: SectionReader) -> FabricTestFacts:
    """`nccl-tests` if ~/nccl-tests/build/all_gather_perf is executable; ib_write_bw's path if it
    is on PATH (tools/recon/sections.py FABRIC_TESTS_COMMAND)."""
    group = FabricTestFacts()
    said = reader.read(group, "fabric-tests", str.split)
    if said is not None:
        group.nccl_tests = "nccl-tests" in said
        group.perftest = any(word.endswith("/ib_write_bw") for word in said)
    return group
