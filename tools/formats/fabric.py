"""Fabric formats: RDMA ports (`ibstat`, `ibv_devinfo`, `ibdev2netdev`, `rdma link show`), link
settings (`ethtool`, `ethtool --show-fec`), the fabric benchmarks (`ib_write_bw`, nccl-tests) and
NCCL's own debug lines. A port that is not up is a finding: the fabric cannot use it."""

from __future__ import annotations

import re

from tools.formats.format import Format, Told, sign
from tools.jobs.progress.errors import first_error
from tools.jobs.progress.lines import screen_lines
from tools.recon.parsers.errors import ParseError
from tools.recon.parsers.ethtool import parse_ethtool, parse_ethtool_fec
from tools.recon.parsers.ibv_devinfo import parse_ibv_devinfo
from tools.recon.parsers.nccl import parse_nccl_rows
from tools.recon.parsers.perftest import parse_perftest_bandwidth
from tools.recon.parsers.rdma import parse_ibdev2netdev, parse_ibstat, parse_rdma_link_show

_PROMPT = re.compile(r"^(\S*[$#] .*)$", re.M)  # a pasted prompt line, not the tool's output
_LAST_WORD = re.compile(r"(?:ethtool|--show-fec)\s+(\S+)")


def _read_ibstat(text: str) -> Told:
    facts: dict[str, object] = {}
    findings = []
    for ca in parse_ibstat(text):
        for port in ca.ports:
            rate = f", {port.rate_gbps:g} Gb/s" if port.rate_gbps else ""
            facts[f"{ca.name} port {port.number}"] = (
                f"{port.state} / {port.physical_state}, {port.link_layer}{rate} ({ca.ca_type})"
            )
            if port.state and port.state.lower() != "active":
                findings.append(
                    f"{ca.name} port {port.number} is {port.state} ({port.physical_state}): "
                    "the fabric cannot use it"
                )
    return facts, findings


def _read_ibv_devinfo(text: str) -> Told:
    facts: dict[str, object] = {}
    findings = []
    for device in parse_ibv_devinfo(text):
        for port in device.ports:
            facts[f"{device.name} port {port.number}"] = (
                f"{port.state}, {port.link_layer}, MTU {port.active_mtu}, "
                f"firmware {device.firmware_version}"
            )
            if port.state != "PORT_ACTIVE":
                findings.append(
                    f"{device.name} port {port.number} is {port.state}: the fabric cannot use it"
                )
    return facts, findings


def _read_ibdev2netdev(text: str) -> Told:
    rows = parse_ibdev2netdev(text)
    facts: dict[str, object] = {
        f"{r.device} port {r.port}": f"{r.netdev} ({r.state})" for r in rows
    }
    findings = [f"{r.device} ({r.netdev}) is {r.state}" for r in rows if not r.is_up]
    return facts, findings


def _read_rdma_link(text: str) -> Told:
    links = parse_rdma_link_show(text)
    facts: dict[str, object] = {
        f"{link.device}/{link.port}": f"{link.state} {link.physical_state} netdev {link.netdev}"
        for link in links
    }
    findings = [
        f"{link.device}/{link.port} is not up ({link.physical_state})"
        for link in links
        if not link.is_up
    ]
    return facts, findings


def _runs(text: str) -> list[tuple[str, str]]:
    """A paste of several runs as (the interface its prompt line names, its output) pairs."""
    pieces = _PROMPT.split(text)
    runs = [("", pieces[0])] if pieces[0].strip() else []
    for prompt, output in zip(pieces[1::2], pieces[2::2], strict=True):
        named = _LAST_WORD.search(prompt)
        runs.append((named[1] if named else "", output))
    return runs


def _read_ethtool(text: str) -> Told:
    facts: dict[str, object] = {}
    for number, (named, output) in enumerate(_runs(text)):
        info = parse_ethtool(output)
        name = f"{info.interface or named or 'link'} (run {number + 1})"
        detected = "" if info.link_detected is None else f", link detected: {info.link_detected}"
        facts[name] = f"{info.speed_mbps} Mb/s{detected}"
    return facts, []


def _read_fec(text: str) -> Told:
    facts: dict[str, object] = {}
    for number, (named, output) in enumerate(_runs(text)):
        fec = parse_ethtool_fec(output)
        facts[f"{fec.interface or named or 'link'} (run {number + 1})"] = (
            f"active FEC {fec.active_encoding}"
        )
    return facts, []


def _read_perftest(text: str) -> Told:
    result = parse_perftest_bandwidth(text)
    if result is None:
        raise ParseError("a perftest result row", text)
    return {
        "test": result.test,
        "device": result.device,
        "average": f"{result.average} {result.unit}",
        "peak": f"{result.peak} {result.unit}",
    }, []


def _read_nccl_tests(text: str) -> Told:
    rows = parse_nccl_rows(text)
    if not rows:
        raise ParseError("nccl-tests size rows", text)
    largest = rows[-1]
    return {"sizes": len(rows), "bus bandwidth at largest size": f"{largest.busbw_gb_s} GB/s"}, []


_NCCL_VERSION = re.compile(r"NCCL INFO NCCL version (\S+)")
_NCCL_NET = re.compile(r"NCCL INFO NET/(IB|Socket)\s*:?\s*(?:\[\d+\]\s*)?(?:Using\s*)?(.*)")


def _read_nccl_debug(text: str) -> Told:
    version = _NCCL_VERSION.search(text)
    transports = {m[1] for m in _NCCL_NET.finditer(text)}
    facts: dict[str, object] = {"NCCL": version[1] if version else None,
                                "transport": ", ".join(sorted(transports)) or None}  # fmt: skip
    findings = (
        ["NCCL fell back to sockets: no RDMA between the ranks"] if transports == {"Socket"} else []
    )
    if (error := first_error(screen_lines(text))) is not None:
        findings.append(f"failed: {error}")
    return facts, findings


FORMATS = (
    Format(
        "ibstat",
        (sign(r"^CA '[^']+'$"), sign(r"^\s+Link layer:", 0.5), sign(r"^\s+Physical state:", 0.3)),
        _read_ibstat,
    ),
    Format(
        "ibv_devinfo",
        (
            sign(r"^hca_id:\s*\S+"),
            sign(r"^\s+phys_port_cnt:", 0.5),
            sign(r"PORT_(?:ACTIVE|DOWN|INIT)", 0.3),
        ),
        _read_ibv_devinfo,
    ),
    Format("ibdev2netdev", (sign(r"^\S+ port \d+ ==> \S+ \((?:Up|Down)\)"),), _read_ibdev2netdev),
    Format("rdma link show", (sign(r"^link \S+/\d+ +state "),), _read_rdma_link),
    Format(
        "ethtool",
        (
            sign(r"^\s*Link detected:"),
            sign(r"^Settings for \S+:", 0.6),
            sign(r"^\s*Speed: ", 0.4),
            sign(r"^\S*[$#] (?:sudo )?ethtool (?!--show-fec)\S", 0.6),
        ),
        _read_ethtool,
    ),
    Format("ethtool --show-fec", (sign(r"^FEC parameters for \S+:"),), _read_fec),
    Format(
        "ib_write_bw (perftest)",
        (sign(r"BW Test$"), sign(r"#bytes\s+#iterations", 0.5)),
        _read_perftest,
    ),
    Format(
        "nccl-tests",
        (
            sign(r"^# nccl-tests version"),
            sign(r"#\s+size\s+count\s+type", 0.8),
            sign(r"Avg bus bandwidth", 0.5),
        ),
        _read_nccl_tests,
    ),
    Format("NCCL debug log", (sign(r"NCCL INFO "),), _read_nccl_debug),
)
