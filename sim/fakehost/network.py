"""`ip` (addr, link, route; brief, JSON and full layouts) and `ethtool` for a simulated Spark.

`ip link set DEV up|down` and `ip addr add|del` change the host state, so bringing a RoCE link up
is visible to `ibdev2netdev` and `rdma link show` afterwards.
"""

from __future__ import annotations

import ipaddress
import json
import os
import sys
from pathlib import Path
from typing import Any

from .links import carrier, flags, operstate, visible_addresses
from .scout_wall import WALLED_ENV
from .state import locked_state

_QDISC = {"loopback": "noqueue", "bridge": "noqueue", "wifi": "noqueue"}
_OBJECTS = {
    "a": "addr",
    "addr": "addr",
    "address": "addr",
    "l": "link",
    "link": "link",
    "r": "route",
    "ro": "route",
    "route": "route",
}


def _family(cidr: str) -> str:
    return "inet6" if ":" in cidr else "inet"


def _scope(cidr: str) -> str:
    ip = ipaddress.ip_interface(cidr).ip
    if ip.is_loopback:
        return "host"
    return "link" if ip.is_link_local else "global"


def _nics(state: dict[str, Any], dev: str | None) -> list[tuple[str, dict[str, Any]]]:
    items = sorted(state["nics"].items(), key=lambda item: item[1]["index"])
    return [(n, nic) for n, nic in items if dev is None or n == dev or nic.get("altname") == dev]


# IPoIB: 20-byte hardware address (4 bytes of flags and queue pair, then the port GID) and the
# all-nodes broadcast; qlen 256 (`ip -j link` of IPoIB ports in a public GitHub test, index id
# 36622004671).
IPOIB_ADDRESS_PREFIX = "00:00:10:29:fe:80:00:00:00:00:00:00:"
IPOIB_BROADCAST = "00:ff:ff:ff:ff:12:40:1b:ff:ff:00:00:00:00:00:00:ff:ff:ff:ff"


def _link_address(nic: dict[str, Any]) -> tuple[str, str, str]:
    """(link type, address, broadcast) as `ip link` shows them."""
    if nic["kind"] == "loopback":
        return "loopback", nic["mac"], "00:00:00:00:00:00"
    if nic["kind"] == "ib":
        return "infiniband", IPOIB_ADDRESS_PREFIX + nic["mac"], IPOIB_BROADCAST
    return "ether", nic["mac"], "ff:ff:ff:ff:ff:ff"


def _txqlen(nic: dict[str, Any]) -> int:
    return 256 if nic["kind"] == "ib" else 1000


def _link_line(name: str, nic: dict[str, Any]) -> list[str]:
    qlen = f" qlen {_txqlen(nic)}" if nic["kind"] not in ("bridge",) else ""
    head = (
        f"{nic['index']}: {name}: <{','.join(flags(nic))}> mtu {nic['mtu']} "
        f"qdisc {_QDISC.get(nic['kind'], 'mq')} state {operstate(nic)}"
    )
    kind, address, brd = _link_address(nic)
    lines = [head, f"    link/{kind} {address} brd {brd}"]
    if nic.get("altname"):
        lines.append(f"    altname {nic['altname']}")
    return [lines[0] + "{mode} group default" + qlen, *lines[1:]]


def _addr_lines(name: str, nic: dict[str, Any], family: str | None) -> list[str]:
    lines = []
    for cidr in visible_addresses(nic):
        fam = _family(cidr)
        if family and fam != family:
            continue
        scope = _scope(cidr)
        if fam == "inet":
            net = ipaddress.ip_interface(cidr).network
            brd = f" brd {net.broadcast_address}" if net.prefixlen < 31 and scope != "host" else ""
            extra = " noprefixroute" if nic["kind"] == "cx7" else ""
            lines.append(f"    inet {cidr}{brd} scope {scope}{extra} {name}")
        else:
            extra = " noprefixroute" if scope == "host" else ""
            lines.append(f"    inet6 {cidr} scope {scope}{extra} ")
        lines.append("       valid_lft forever preferred_lft forever")
    return lines


def _json_entry(name: str, nic: dict[str, Any], with_addr: bool, family: str | None) -> dict:
    link_type, address, broadcast = _link_address(nic)
    entry: dict[str, Any] = {
        "ifindex": nic["index"],
        "ifname": name,
        "flags": flags(nic),
        "mtu": nic["mtu"],
        "qdisc": _QDISC.get(nic["kind"], "mq"),
        "operstate": operstate(nic),
        "group": "default",
        "txqlen": _txqlen(nic),
        "link_type": link_type,
        "address": address,
        "broadcast": broadcast,
    }
    if nic.get("altname"):
        entry["altnames"] = [nic["altname"]]
    if nic.get("pci"):
        entry["parentbus"], entry["parentdev"] = "pci", nic["pci"]
    if with_addr:
        infos = []
        for cidr in visible_addresses(nic):
            if family and _family(cidr) != family:
                continue
            iface = ipaddress.ip_interface(cidr)
            info: dict[str, Any] = {
                "family": _family(cidr),
                "local": str(iface.ip),
                "prefixlen": iface.network.prefixlen,
            }
            if (
                info["family"] == "inet"
                and iface.network.prefixlen < 31
                and not iface.ip.is_loopback
            ):
                info["broadcast"] = str(iface.network.broadcast_address)
            info["scope"] = _scope(cidr)
            if info["family"] == "inet":
                info["label"] = name
            info["valid_life_time"] = info["preferred_life_time"] = 4294967295
            infos.append(info)
        entry["addr_info"] = infos
    return entry


def _show(obj: str, opts: set[str], dev: str | None, state: dict[str, Any]) -> int:
    nics = _nics(state, dev)
    if dev and not nics:
        sys.stderr.write(f'Device "{dev}" does not exist.\n')
        return 1
    family = "inet" if "-4" in opts else "inet6" if "-6" in opts else None
    if opts & {"-j", "-json"}:
        entries = [_json_entry(n, nic, obj == "addr", family) for n, nic in nics]
        print(json.dumps(entries, separators=(",", ":"), indent=4 if "-p" in opts else None))
        return 0
    for name, nic in nics:
        state_col = operstate(nic)
        if opts & {"-br", "-brief"}:
            if obj == "addr":
                addrs = [a for a in visible_addresses(nic) if not family or _family(a) == family]
                print(f"{name:<16} {state_col:<14} " + "".join(a + " " for a in addrs))
            else:
                print(f"{name:<16} {state_col:<14} {nic['mac']} <{','.join(flags(nic))}> ")
            continue
        link = _link_line(name, nic)
        if obj == "addr":
            print("\n".join([link[0].format(mode=" "), *link[1:], *_addr_lines(name, nic, family)]))
        else:
            print("\n".join([link[0].format(mode=" mode DEFAULT "), *link[1:]]))
    return 0


def _routes(state: dict[str, Any]) -> int:
    gateway_done = False
    for name, nic in _nics(state, None):
        for cidr in visible_addresses(nic):
            if _family(cidr) != "inet" or nic["kind"] == "loopback":
                continue
            iface = ipaddress.ip_interface(cidr)
            if nic["kind"] == "ethernet" and not gateway_done:
                gw = next(iface.network.hosts())
                print(f"default via {gw} dev {name} proto static metric 100 ")
                gateway_done = True
            down = "" if carrier(nic) else " linkdown"
            print(f"{iface.network} dev {name} proto kernel scope link src {iface.ip}{down} ")
    return 0


def _change(obj: str, words: list[str], host_dir: Path) -> int:
    """`ip link set DEV up|down|mtu N` and `ip addr add|del CIDR dev DEV`."""
    verb, rest = words[0], words[1:]
    if os.environ.get(WALLED_ENV) == "1":  # CAP_NET_ADMIN is gone inside Scout's wall
        sys.stderr.write("RTNETLINK answers: Operation not permitted\n")
        return 2
    if "dev" in rest:
        i = rest.index("dev")
        dev, rest = rest[i + 1] if i + 1 < len(rest) else "", rest[:i] + rest[i + 2 :]
    else:
        dev, rest = (rest[0], rest[1:]) if rest else ("", [])
    with locked_state(host_dir) as state:
        if dev not in state["nics"]:
            sys.stderr.write(f'Cannot find device "{dev}"\n')
            return 1
        nic = state["nics"][dev]
        if obj == "link" and verb == "set":
            for i, word in enumerate(rest):
                if word in ("up", "down"):
                    nic["up"] = word == "up"
                elif word == "mtu" and i + 1 < len(rest) and rest[i + 1].isdigit():
                    nic["mtu"] = int(rest[i + 1])
            return 0
        if obj == "addr" and verb in ("add", "del") and rest:
            cidr = rest[0] if "/" in rest[0] else rest[0] + "/32"
            if verb == "add":
                if cidr in nic["addresses"]:
                    sys.stderr.write("RTNETLINK answers: File exists\n")
                    return 2
                nic["addresses"].append(cidr)
            elif cidr in nic["addresses"]:
                nic["addresses"].remove(cidr)
            else:
                sys.stderr.write("RTNETLINK answers: Cannot assign requested address\n")
                return 2
            return 0
    sys.stderr.write(f'Command "{verb}" is unknown, try "ip {obj} help".\n')
    return 1


def run_ip(args: list[str], state: dict[str, Any], host_dir: Path) -> int:
    opts = {a for a in args if a.startswith("-")}
    words = [a for a in args if not a.startswith("-")]
    if not words or words[0] not in _OBJECTS:
        sys.stderr.write(f'Object "{words[0] if words else ""}" is unknown, try "ip help".\n')
        return 1
    obj, words = _OBJECTS[words[0]], words[1:]
    if obj == "route":
        return _routes(state)
    if words and words[0] in ("set", "add", "del", "delete"):
        return _change(obj, ["del" if words[0] == "delete" else words[0], *words[1:]], host_dir)
    if words and words[0] in ("show", "list", "ls"):
        words = words[1:]
    dev = words[1] if words[:1] == ["dev"] and len(words) > 1 else (words[0] if words else None)
    return _show(obj, opts, dev, state)


def run_ethtool(args: list[str], state: dict[str, Any]) -> int:
    words = [a for a in args if not a.startswith("-")]
    if not words:
        sys.stderr.write(
            "ethtool: bad command line argument(s)\nFor more information run ethtool -h\n"
        )
        return 1
    dev = words[0]
    nic = state["nics"].get(dev)
    if nic is None:
        sys.stderr.write(
            "netlink error: no device matches name (offset 24)\n"
            "netlink error: No such device\nNo data available\n"
        )
        return 75
    if "-i" in args or "--driver" in args:
        drivers = {"cx7": "mlx5_core", "ib": "mlx5_core[ib_ipoib]", "ethernet": "r8127"}
        driver = {**drivers, "wifi": "mt7925e"}.get(nic["kind"], "")
        print(
            f"driver: {driver}\nversion: {state['kernel']}\n"
            f"firmware-version: {state['hca_firmware']} (NVD0000000054)"
        )
        print(
            f"expansion-rom-version: \nbus-info: {nic.get('pci') or ''}\nsupports-statistics: yes"
        )
        return 0
    if "--show-fec" in args:
        print(f"FEC parameters for {dev}:\nSupported/Configured FEC encodings: Auto")
        print(f"Active FEC encoding: {'None' if carrier(nic) else 'Off'}")
        return 0
    up = carrier(nic) and nic.get("speed_mbps")
    print(f"Settings for {dev}:")
    if nic["kind"] == "cx7":
        print("\tSupported ports: [ Backplane ]")
        print(
            "\tSupported link modes:   200000baseCR4/Full\n"
            "\t                        100000baseCR4/Full"
        )
    print(f"\tSpeed: {nic['speed_mbps']}Mb/s" if up else "\tSpeed: Unknown!")
    print("\tDuplex: Full" if up else "\tDuplex: Unknown! (255)")
    print("\tAuto-negotiation: on")
    print("\tPort: Direct Attach Copper" if nic["kind"] == "cx7" else "\tPort: Twisted Pair")
    print("\tPHYAD: 0\n\tTransceiver: internal")
    print(f"\tLink detected: {'yes' if carrier(nic) else 'no'}")
    return 0
