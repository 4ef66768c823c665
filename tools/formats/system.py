"""System formats: disk (`df`, `du`), memory (`free`, `/proc/meminfo`, `top`), the kernel and
release files, `lscpu`, and `ray status`. Findings are the facts a deployment stops on: a disk
nearly full, memory mostly in use, a Ray cluster whose GPUs are all reserved."""

from __future__ import annotations

import re

from tools.formats.format import Format, Told, sign
from tools.recon.parsers.cpu import parse_lscpu
from tools.recon.parsers.disk import parse_df, parse_du_sb
from tools.recon.parsers.errors import ParseError
from tools.recon.parsers.kernel import parse_uname_a
from tools.recon.parsers.memory import parse_free, parse_meminfo
from tools.recon.parsers.os_release import parse_dgx_release, parse_lsb_release, parse_os_release
from tools.recon.parsers.ray import parse_ray_status
from tools.recon.parsers.units import parse_size_bytes

FULL_PERCENT = 90
_SEPARATOR = re.compile(r"^-{3,}$", re.M)
_DF_HEADER = re.compile(r"^(?=Filesystem\s)", re.M)
_DU_HUMAN = re.compile(r"^(?P<size>[\d.]+[KMGTP]?)\t(?P<path>\S.*)$", re.M)


def _gb(size: int | None) -> str:
    return "?" if size is None else f"{size / 1e9:.1f} GB"


def _read_df(text: str) -> Told:
    block = _SEPARATOR.split(text)[0]
    facts: dict[str, object] = {}
    findings = []
    disks = [disk for run in _DF_HEADER.split(block) if run.strip() for disk in parse_df(run)]
    for disk in disks:
        facts[disk.mounted_on] = f"{_gb(disk.available_bytes)} free of {_gb(disk.size_bytes)}"
        if disk.use_percent is not None and disk.use_percent >= FULL_PERCENT:
            findings.append(f"{disk.mounted_on} is {disk.use_percent}% full")
    return facts, findings


def _read_du(text: str) -> Told:
    rows = [(m["path"], parse_size_bytes(m["size"])) for m in _DU_HUMAN.finditer(text)]
    rows += [(folder.path, folder.size_bytes) for folder in parse_du_sb(text)]
    if not rows:
        raise ParseError("`du` rows 'SIZE<TAB>PATH'", text)
    return {path: _gb(size) for path, size in rows}, []


def _read_free(text: str) -> Told:
    report = parse_free(text)
    memory = report.memory
    facts: dict[str, object] = {"memory total": _gb(memory.total_bytes),
                                "available": _gb(memory.available_bytes)}  # fmt: skip
    if report.swap is not None and report.swap.used_bytes:
        facts["swap used"] = _gb(report.swap.used_bytes)
    return facts, []


def _read_meminfo(text: str) -> Told:
    info = parse_meminfo(text)
    return {"memory total": _gb(info.total_bytes), "available": _gb(info.available_bytes)}, []


def _read_top(text: str) -> Told:
    memory = re.search(r"^MiB Mem :\s*([\d.]+) total,\s*([\d.]+) free", text, re.M)
    if memory is None:
        raise ParseError("top's 'MiB Mem :' line", text)
    return {"memory total": f"{float(memory[1]) / 1024:.1f} GiB",
            "free": f"{float(memory[2]) / 1024:.1f} GiB"}, []  # fmt: skip


def _read_uname(text: str) -> Told:
    info = parse_uname_a(text)
    return {"host": info.hostname, "kernel": info.kernel_release, "machine": info.machine}, []


def _read_os_release(text: str) -> Told:
    release = parse_os_release(text)
    return {"os": release.pretty_name or release.name, "version": release.version_id}, []


def _read_lsb(text: str) -> Told:
    release = parse_lsb_release(text)
    return {"os": release.description or release.distributor_id, "version": release.release}, []


def _read_dgx(text: str) -> Told:
    release = parse_dgx_release(text)
    return {"DGX OS": release.pretty_name or release.name, "build": release.swbuild_version}, []


def _read_lscpu(text: str) -> Told:
    info = parse_lscpu(text)
    return {"architecture": info.architecture, "CPUs": info.cpu_count,
            "models": ", ".join(info.model_names)}, []  # fmt: skip


def _read_ray_status(text: str) -> Told:
    status = parse_ray_status(text)
    if not status.running:
        return {"ray": "not running"}, [f"no Ray cluster: {status.error}"]
    facts: dict[str, object] = {"nodes": status.node_count}
    findings = []
    gpu = status.resource("GPU")
    if gpu is not None:
        facts["GPUs"] = f"{gpu.used:g} of {gpu.total:g} in use"
        if gpu.total and gpu.used >= gpu.total:
            findings.append(f"all {gpu.total:g} GPUs of the Ray cluster are in use or reserved")
    findings += [f"Ray cannot place: {demand}" for demand in status.pending_demands]
    return facts, findings


FORMATS = (
    Format(
        "df",
        (sign(r"^Filesystem\s+(?:Type\s+)?(?:Size|1K-blocks|1B-blocks|1024-blocks)\s+Used"),),
        _read_df,
    ),
    Format("du", (sign(r"^[\d.]+[KMGTP]?\t/"),), _read_du),
    Format("free", (sign(r"^\s*total\s+used\s+free\s+shared\s+buff/cache"),), _read_free),
    Format(
        "/proc/meminfo", (sign(r"^MemTotal:\s+\d+ kB"), sign(r"^MemAvailable:", 0.5)), _read_meminfo
    ),
    Format("top", (sign(r"^top - \d\d:\d\d:\d\d up "), sign(r"^MiB Mem :", 0.5)), _read_top),
    Format("uname -a", (sign(r"\ALinux \S+ \d+\.\d+\S* #\d+"),), _read_uname),
    Format(
        "/etc/os-release", (sign(r'^PRETTY_NAME="'), sign(r"^VERSION_ID=", 0.5)), _read_os_release
    ),
    Format("/etc/lsb-release", (sign(r"^DISTRIB_ID="),), _read_lsb),
    Format("/etc/dgx-release", (sign(r'^DGX_NAME="'), sign(r"^DGX_SWBUILD", 0.5)), _read_dgx),
    Format(
        "lscpu",
        (sign(r"^Architecture:\s+\w+"), sign(r"^Model name:", 0.3), sign(r"^CPU\(s\):", 0.3)),
        _read_lscpu,
    ),
    Format(
        "ray status",
        (
            sign(r"^=+ (?:Autoscaler|Cluster) status"),
            sign(r"^(?:Node status|Resources)$", 0.3),
            sign(r"^Active:$", 0.3),
        ),
        _read_ray_status,
    ),
)
