"""perftest bandwidth runs (`ib_write_bw`, `ib_read_bw`, `ib_send_bw`): the measured bandwidth.

Format from NVIDIA's DGX Spark benchmarking guide (tests/fixtures/recon/
spark_ib_write_bw_client_rocep1s0f0.txt): a banner naming the test and the device, then
`#bytes #iterations BW peak[Gb/sec] BW average[Gb/sec] MsgRate[Mpps]` and one row per report
(`--run_infinitely` keeps adding rows). The unit is Gb/sec with `--report_gbits`, else MB/sec.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

_TEST = re.compile(r"^\s*(?P<test>\w+ (?:BW|Lat) Test)\s*$", re.M)
_DEVICE = re.compile(r"Device\s*:\s*(?P<device>\S+)")
_HEADER = re.compile(r"^\s*#bytes\s+#iterations\s+BW peak\[(?P<unit>[^\]]+)\]", re.M)
_ROW = re.compile(
    r"^\s*(?P<bytes>\d+)\s+(?P<iters>\d+)\s+(?P<peak>[\d.]+)\s+(?P<average>[\d.]+)\s+[\d.]+\s*$",
    re.M,
)


@dataclass(frozen=True)
class PerftestBandwidth:
    test: str | None
    device: str | None
    unit: str
    msg_bytes: int
    peak: float
    average: float


def parse_perftest_bandwidth(text: str) -> PerftestBandwidth | None:
    """The last reported row, or None before the first one."""
    header = _HEADER.search(text)
    if header is None:
        return None
    rows = list(_ROW.finditer(text, header.end()))
    if not rows:
        return None
    last, test, device = rows[-1], _TEST.search(text), _DEVICE.search(text)
    return PerftestBandwidth(
        test=test["test"] if test else None,
        device=device["device"] if device else None,
        unit=header["unit"].replace("/sec", "/s"),
        msg_bytes=int(last["bytes"]),
        peak=float(last["peak"]),
        average=float(last["average"]),
    )
