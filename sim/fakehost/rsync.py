"""`rsync` of a model in the HF cache to another host of the cluster, over the simulated network.

The community recipes copy the weights from the node that downloaded them to the others with
rsync over the fabric. The copy goes as fast as the link this host would use for the peer's
address allows (its NIC's speed: 200 Gb/s ConnectX-7 or the 10 GbE management port), capped at
the host's `rates.copy_mb_s` (disk and ssh), on the simulated clock (pace.py); the peer's cache
entry and disk grow as it goes. Output as the captures show it (tests/fixtures/jobs/rsync_*):
`--info=progress2` is one line rewritten with \\r (`  5,268,953,088 100%   87.36MB/s    0:00:57
(xfr#1, to-chk=0/1)`, `-h` prints `737.82M`); `-P`/`--progress` shows each file's name and its
progress; `-v` ends with `sent … bytes  received … bytes  … bytes/sec` and `total size is …
speedup is 1.00`. Failures are rsync's and ssh's own lines. A peer that cannot be reached (no
route, or down: the cluster's `down` fault) fails as rsync 3.2.7 over ssh does, exit 255 (public
CI logs show these three lines verbatim, e.g. with `Connection timed out` in the first):
`ssh: connect to host ADDR port 22: No route to host`,
`rsync: connection unexpectedly closed (0 bytes received so far) [sender]`,
`rsync error: unexplained error (code 255) at io.c(231) [sender=3.2.7]`; a peer whose host key
or login this host's account lacks, the same with ssh's refusal first (peer_trust.py).
"""

from __future__ import annotations

import ipaddress
import re
import sys
from pathlib import Path
from typing import Any

from . import fabric, peer_trust
from .hfcache import GB, copy_folder, grow, open_folder
from .links import carrier
from .pace import SimulatorGone, ticks
from .state import read_state

_MB = 1_000_000
_MODEL_DIR = re.compile(r"models--(?P<org>[^/]+?)--(?P<name>[^/]+)")
_VALUE_OPTS = {"-e", "--rsh", "--exclude", "--include", "--info", "--bwlimit", "-B"}
_FAILED = "rsync error: {what} (code {code}) at {where} [sender=3.2.7]"


def _parse(args: list[str]) -> tuple[set[str], list[str]]:
    flags, paths, i = set(), [], 0
    while i < len(args):
        arg = args[i]
        key, eq, value = arg.partition("=")
        if key in _VALUE_OPTS:
            if not eq and i + 1 < len(args):
                i += 1
                value = args[i]
            flags.add(f"{key}={value}")
        elif arg.startswith("--"):
            flags.add(arg)
        elif arg.startswith("-") and len(arg) > 1:
            flags.update(f"-{c}" for c in arg[1:])
        else:
            paths.append(arg)
        i += 1
    return flags, paths


def run_rsync(args: list[str], state: dict[str, Any], host_dir: Path) -> int:
    flags, paths = _parse(args)
    if len(paths) < 2:
        sys.stderr.write("rsync: no destination given\n" + _FAILED.format(
            what="syntax or usage error", code=1, where="main.c(1541)") + "\n")  # fmt: skip
        return 1
    source, dest = paths[0], paths[-1]
    match = _MODEL_DIR.search(source)
    model = f"{match['org']}--{match['name']}".replace("--", "/", 1) if match else None
    cached = state.get("hf_cache", {}).get(model or "")
    if model is None or cached is None or cached.get("partial"):
        sys.stderr.write(
            f'rsync: [sender] change_dir "{source}" failed: No such file or directory (2)\n'
            + _FAILED.format(
                what="some files/attrs were not transferred (see previous errors)",
                code=23,
                where="main.c(1338)",
            )
            + "\n"
        )
        return 23
    host, _, _path = dest.rpartition(":")
    address = host.rpartition("@")[2]
    peer = fabric.peer_at(state, host_dir, address)
    refused = None if peer is None else peer_trust.refusal(state, read_state(peer), host)
    if peer is None or refused is not None:
        said = refused or f"ssh: connect to host {address} port 22: No route to host\n"
        sys.stderr.write(
            said
            + "rsync: connection unexpectedly closed (0 bytes received so far) [sender]\n"
            + _FAILED.format(what="unexplained error", code=255, where="io.c(231)")
            + "\n"
        )
        return 255
    try:
        _copy(model, cached, flags, state, host_dir, peer, address)
    except SimulatorGone:
        return 143
    return 0


def _link_mb_s(state: dict[str, Any], address: str) -> float:
    """What the NIC holding the route to `address` can carry, in MB/s."""
    target = ipaddress.ip_address(address)
    for nic in state["nics"].values():
        for cidr in nic["addresses"]:
            if carrier(nic) and target in ipaddress.ip_interface(cidr).network:
                return float(nic.get("speed_mbps") or 1000) / 8
    return 125.0


def _copy(
    model: str,
    cached: dict[str, Any],
    flags: set[str],
    state: dict[str, Any],
    host_dir: Path,
    peer: Path,
    address: str,
) -> None:
    total = round(cached["size_gb"] * GB)
    files = int(state.get("hub", {}).get(model, {}).get("files", 1))
    rate = min(_link_mb_s(state, address), float(state["rates"]["copy_mb_s"])) * _MB
    human, verbose = "-h" in flags, "-v" in flags
    per_file = "-P" in flags or "--progress" in flags
    whole = any(f.startswith("--info=") and "progress2" in f for f in flags)
    open_folder(peer / "home", model)
    if verbose:
        print("sending incremental file list", flush=True)
    seconds, done = total / rate, 0
    for passed in ticks(seconds, state, host_dir):
        done = round(total * passed / seconds) if seconds else total
        fetched = min(files, files * done // total) if total else files
        if whole or per_file:
            line = _progress(done, total, passed, seconds, fetched, files, human)
            sys.stdout.write("\r" + line)
            sys.stdout.flush()
        grow(peer, model, done, total)
    if whole or per_file:
        sys.stdout.write("\n")
    if verbose:
        sent = total + 40 * files
        print(f"\nsent {sent:,} bytes  received {35 * files:,} bytes  "
              f"{sent / max(seconds, 0.001):,.2f} bytes/sec")  # fmt: skip
        print(f"total size is {total:,}  speedup is 1.00", flush=True)
    grow(peer, model, total, total)
    copy_folder(host_dir / "home", peer / "home", model)


def _progress(
    done: int, total: int, passed: float, seconds: float, fetched: int, files: int, human: bool
) -> str:
    """`  5,268,953,088 100%   87.36MB/s    0:00:57 (xfr#1, to-chk=0/1)`: time left while
    copying, time taken at the end."""
    size = _human(done) if human else f"{done:,}"
    pct = round(100 * done / total) if total else 100
    speed = done / passed if passed > 0 else 0.0
    shown = passed if done >= total else max(0.0, seconds - passed)
    hours, rest = divmod(int(shown), 3600)
    clock = f"{hours}:{rest // 60:02d}:{rest % 60:02d}"
    counters = f" (xfr#{fetched}, to-chk={files - fetched}/{files})" if fetched else ""
    return f"{size:>15} {pct:3d}% {_human(speed)}B/s {clock:>10}{counters}"


def _human(value: float) -> str:
    for unit, scale in (("G", 1e9), ("M", 1e6), ("k", 1e3)):
        if round(value / scale, 2) >= 1:
            return f"{value / scale:7.2f}{unit}"
    return f"{value:7.2f}"
