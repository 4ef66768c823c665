"""perftest's `ib_write_bw` (and `ib_read_bw`, `ib_send_bw`): a server waits, a client measures.

Output as NVIDIA's DGX Spark benchmarking guide shows a client on a Spark (tests/fixtures/recon/
spark_ib_write_bw_client_rocep1s0f0.txt): the banner with the device and link settings, the
queue-pair addresses (GIDs from the ports' IPv4 addresses), the table header and one row per
report; with `--run_infinitely` a row every simulated five seconds until stopped. The average
is what that guide measured on one port with one queue pair (92.57 Gb/s) when both ends have
the port up; a server with no client prints perftest's waiting banner; a client whose server
is not listening fails with perftest's own lines.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

from . import fabric
from .links import carrier
from .pace import SimulatorGone, ticks
from .state import locked_state, read_state

ONE_PORT_GBPS = 92.57
DEFAULT_PORT = 18515
REPORT_S = 5.0
_TITLES = {"ib_write_bw": "RDMA_Write", "ib_read_bw": "RDMA_Read", "ib_send_bw": "Send"}
_LINE = "-" * 87


def _parse(args: list[str]) -> tuple[dict[str, str], list[str]]:
    opts, rest, i = {}, [], 0
    valued = {"-d", "-i", "-p", "-s", "-D", "-n", "-x", "-q", "--ib-dev", "--port"}
    while i < len(args):
        if args[i] in valued and i + 1 < len(args):
            opts[args[i]] = args[i + 1]
            i += 2
            continue
        if args[i].startswith("-"):
            opts[args[i]] = "true"
        else:
            rest.append(args[i])
        i += 1
    return opts, rest


def _port_nic(state: dict[str, Any], device: str) -> dict[str, Any] | None:
    return next((n for n in state["nics"].values() if n.get("rdma_dev") == device), None)


def _gid(nic: dict[str, Any]) -> str:
    ip = nic["addresses"][0].split("/")[0] if nic["addresses"] else "0.0.0.0"
    return "00:00:00:00:00:00:00:00:00:00:255:255:" + ":".join(ip.split("."))


def _banner(title: str, device: str, nic: dict[str, Any], peer: dict[str, Any] | None) -> None:
    mtu = 1024 if nic.get("mtu", 1500) < 4200 else 4096
    print(f"{_LINE}\n                    {title} BW Test")
    print(f" Dual-port       : OFF            Device         : {device}")
    print(" Number of qps   : 1              Transport type : IB")
    print(" Connection type : RC             Using SRQ      : OFF")
    print(" PCIe relax order: ON\n ibv_wr* API     : ON\n TX depth        : 128")
    print(f" CQ Moderation   : 1\n Mtu             : {mtu}[B]\n Link type       : Ethernet")
    print(" GID index       : 3\n Max inline data : 0[B]\n rdma_cm QPs     : OFF")
    print(f" Data ex. method : Ethernet\n{_LINE}")
    print(" local address:  LID 0000 QPN 0x0129 PSN 0x57279d RKey 0x184300 VAddr 0x00ec99bedad000")
    print(f" GID:            {_gid(nic)}")
    if peer is not None:
        print(" remote address: LID 0000 QPN 0x0129 PSN 0x531b7  RKey 0x184300 "
              "VAddr 0x00ffeec955d000")  # fmt: skip
        print(f" GID:            {_gid(peer)}")
    print(_LINE, flush=True)


def run_perftest(name: str) -> Any:
    def run(args: list[str], state: dict[str, Any], host_dir: Path) -> int:
        opts, rest = _parse(args)
        device = opts.get("-d") or opts.get("--ib-dev") or ""
        nic = _port_nic(state, device)
        if nic is None or not carrier(nic):
            sys.stderr.write(f" Couldn't get context for the device {device or '(none)'}\n")
            return 1
        port = int(opts.get("-p") or opts.get("--port") or DEFAULT_PORT)
        try:
            if rest:
                return _client(name, opts, rest[0], port, device, nic, state, host_dir)
            return _server(port, device, state, host_dir)
        except SimulatorGone:
            return 143

    return run


def _server(port: int, device: str, state: dict[str, Any], host_dir: Path) -> int:
    with locked_state(host_dir) as changed:
        changed.setdefault("perftest", {})[str(port)] = {"device": device, "done": False}
    print("\n************************************\n* Waiting for client to connect... *\n"
          "************************************", flush=True)  # fmt: skip
    try:
        for _ in ticks(3600.0, state, host_dir):
            if read_state(host_dir).get("perftest", {}).get(str(port), {}).get("done"):
                return 0
    finally:
        with locked_state(host_dir) as changed:
            changed.get("perftest", {}).pop(str(port), None)
    return 0


def _client(
    name: str,
    opts: dict[str, str],
    address: str,
    port: int,
    device: str,
    nic: dict[str, Any],
    state: dict[str, Any],
    host_dir: Path,
) -> int:
    owner = fabric.owner_of(host_dir, address)
    listening = owner and str(port) in read_state(owner[0]).get("perftest", {})
    if owner is None or not listening or not fabric.reachable(state, host_dir, address):
        sys.stderr.write(
            f" Couldn't connect to {address}:{port}\nUnable to open file descriptor for socket "
            "connection Unable to init the socket connection\n"
        )
        return 1
    server = read_state(owner[0])
    peer = _port_nic(server, server["perftest"][str(port)]["device"]) or nic
    if opts.get("--run_infinitely"):
        print("  WARNING: BW peak won't be measured in this run.")
    _banner(_TITLES.get(name, "RDMA_Write"), device, nic, peer)
    gbits = "--report_gbits" in opts
    unit = "Gb/sec" if gbits else "MB/sec"
    bw = ONE_PORT_GBPS if gbits else ONE_PORT_GBPS * 1000 / 8
    print(f" #bytes     #iterations    BW peak[{unit}]    BW average[{unit}]    MsgRate[Mpps]")
    size = int(opts.get("-s", "65536"))
    rate = ONE_PORT_GBPS * 1e9 / 8 / size / 1e6
    iterations = int(rate * 1e6 * REPORT_S)
    reports = 1_000_000 if opts.get("--run_infinitely") else 1
    peak = 0.0 if opts.get("--run_infinitely") else bw
    try:
        for _ in range(reports):
            for _ in ticks(REPORT_S, state, host_dir):
                pass
            print(f" {size:<10} {iterations:<16} {peak:.2f}               {bw:.2f}"
                  f"                {rate:.6f}", flush=True)  # fmt: skip
    finally:
        with locked_state(owner[0]) as changed:
            if str(port) in changed.get("perftest", {}):
                changed["perftest"][str(port)]["done"] = True
    if not opts.get("--run_infinitely"):
        print(_LINE, flush=True)
    return 0
