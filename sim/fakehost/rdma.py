"""`ibdev2netdev`, `rdma link show` and `ibstat` for ConnectX-7 ports, RoCE or InfiniBand.

A Spark's ports are Ethernet (RoCE): ibstat's `Link layer: Ethernet`, LIDs 0
(shared/fixtures/recon/generic_ibstat_cx7_ethernet_down.txt). A port in InfiniBand mode, as on
an 8-GPU H100 node, has a LID from the subnet manager, `Capability mask: 0xa751e848`, a port GUID
equal to the node GUID and `Link layer: InfiniBand` (generic_ibstat_h100_cx7_ib_all_active.txt);
`rdma link` prints its `subnet_prefix fe80:0000:0000:0000 lid N sm_lid N lmc 0` and, before
Linux 6.7, no netdev (linux-rdma list, "RDMA/core: Add support to report the ipoib netdev",
K. Heib, 2023; `rdma link` outputs in public GitHub files index ids 5704869072, 69510653043).
"""

from __future__ import annotations

import sys
from typing import Any

from .links import carrier, rdma_nics


def run_ibdev2netdev(args: list[str], state: dict[str, Any]) -> int:
    for name, nic in sorted(rdma_nics(state), key=lambda item: item[1]["rdma_dev"]):
        status = "Up" if carrier(nic) else "Down"
        print(f"{nic['rdma_dev']} port 1 ==> {name} ({status})")
    return 0


def _link_state(nic: dict[str, Any]) -> tuple[str, str]:
    if carrier(nic):
        return "ACTIVE", "LINK_UP"
    # an InfiniBand port that is enabled but has no partner keeps polling for one
    polling = nic["kind"] == "ib" and nic["up"]
    return "DOWN", "POLLING" if polling else "DISABLED"


def run_rdma(args: list[str], state: dict[str, Any]) -> int:
    words = [a for a in args if not a.startswith("-")]
    if not words or words[0] not in ("link", "dev"):
        sys.stderr.write(f'Object "{words[0] if words else ""}" is unknown, try "rdma help".\n')
        return 1
    if len(words) > 1 and words[1] not in ("show", "list"):
        sys.stderr.write("rdma: this simulated host only supports 'show'.\n")
        return 1
    names = [w for w in words[2:] if w != "dev"]
    wanted = names[0].split("/")[0] if names else None
    for index, (name, nic) in enumerate(rdma_nics(state)):
        dev = nic["rdma_dev"]
        if wanted and wanted != dev:
            continue
        if words[0] == "link":
            st, phys = _link_state(nic)
            if nic["kind"] == "ib":
                print(
                    f"link {dev}/1 subnet_prefix fe80:0000:0000:0000 lid {nic['lid']} sm_lid 1 "
                    f"lmc 0 state {st} physical_state {phys} "
                )
            else:
                print(f"link {dev}/1 state {st} physical_state {phys} netdev {name} ")
        else:
            print(
                f"{index}: {dev}: node_type ca fw {state['hca_firmware']} node_guid "
                f"{_guid(nic, ':')} sys_image_guid {_guid(nic, ':')} "
            )
    return 0


def _guid(nic: dict[str, Any], sep: str) -> str:
    """The node GUID: an InfiniBand port's own (its `mac`), else built from the MAC."""
    o = nic["mac"].split(":")
    raw = "".join(o if nic["kind"] == "ib" else [*o[:3], "03", "00", *o[3:]])
    return sep.join(raw[i : i + 4] for i in range(0, 16, 4)) if sep else "0x" + raw


def _port_guid(nic: dict[str, Any]) -> str:
    if nic["kind"] == "ib":
        return _guid(nic, "")
    o = [int(x, 16) for x in nic["mac"].split(":")]
    o[0] ^= 0x02
    return "0x" + "".join(f"{b:02x}" for b in [*o[:3], 0xFF, 0xFE, *o[3:]])


def run_ibstat(args: list[str], state: dict[str, Any]) -> int:
    for _name, nic in rdma_nics(state):
        if args and args[0] != nic["rdma_dev"]:
            continue
        up, ib = carrier(nic), nic["kind"] == "ib"
        _st, phys = _link_state(nic)
        print(f"CA '{nic['rdma_dev']}'")
        print("\tCA type: MT4129")
        print("\tNumber of ports: 1")
        print(f"\tFirmware version: {state['hca_firmware']}")
        print("\tHardware version: 0")
        print(f"\tNode GUID: {_guid(nic, '')}")
        print(f"\tSystem image GUID: {_guid(nic, '')}")
        print("\tPort 1:")
        print(f"\t\tState: {'Active' if up else 'Down'}")
        print(f"\t\tPhysical state: {'LinkUp' if up else phys.capitalize()}")
        print(f"\t\tRate: {nic['speed_mbps'] // 1000 if up else 40}")
        print(f"\t\tBase lid: {nic['lid'] if ib else 0}")
        print("\t\tLMC: 0")
        print(f"\t\tSM lid: {1 if ib else 0}")
        print(f"\t\tCapability mask: {'0xa751e848' if ib else '0x00010000'}")
        print(f"\t\tPort GUID: {_port_guid(nic)}")
        print(f"\t\tLink layer: {'InfiniBand' if ib else 'Ethernet'}")
    return 0
