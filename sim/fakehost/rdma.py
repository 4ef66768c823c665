"""`ibdev2netdev`, `rdma link show` and `ibstat` for the ConnectX-7 RoCE devices of a Spark."""

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
    return ("ACTIVE", "LINK_UP") if carrier(nic) else ("DOWN", "DISABLED")


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
            print(f"link {dev}/1 state {st} physical_state {phys} netdev {name} ")
        else:
            print(
                f"{index}: {dev}: node_type ca fw 28.45.4028 node_guid {_guid(nic, ':')} "
                f"sys_image_guid {_guid(nic, ':')} "
            )
    return 0


def _guid(nic: dict[str, Any], sep: str) -> str:
    o = nic["mac"].split(":")
    raw = "".join([*o[:3], "03", "00", *o[3:]])
    return sep.join(raw[i : i + 4] for i in range(0, 16, 4)) if sep else "0x" + raw


def _port_guid(nic: dict[str, Any]) -> str:
    o = [int(x, 16) for x in nic["mac"].split(":")]
    o[0] ^= 0x02
    return "0x" + "".join(f"{b:02x}" for b in [*o[:3], 0xFF, 0xFE, *o[3:]])


def run_ibstat(args: list[str], state: dict[str, Any]) -> int:
    for _name, nic in rdma_nics(state):
        if args and args[0] != nic["rdma_dev"]:
            continue
        up = carrier(nic)
        print(f"CA '{nic['rdma_dev']}'")
        print("\tCA type: MT4129")
        print("\tNumber of ports: 1")
        print("\tFirmware version: 28.45.4028")
        print("\tHardware version: 0")
        print(f"\tNode GUID: {_guid(nic, '')}")
        print(f"\tSystem image GUID: {_guid(nic, '')}")
        print("\tPort 1:")
        print(f"\t\tState: {'Active' if up else 'Down'}")
        print(f"\t\tPhysical state: {'LinkUp' if up else 'Disabled'}")
        print(f"\t\tRate: {nic['speed_mbps'] // 1000 if up else 40}")
        print("\t\tBase lid: 0")
        print("\t\tLMC: 0")
        print("\t\tSM lid: 0")
        print("\t\tCapability mask: 0x00010000")
        print(f"\t\tPort GUID: {_port_guid(nic)}")
        print("\t\tLink layer: Ethernet")
    return 0
