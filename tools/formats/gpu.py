"""GPU formats: the `nvidia-smi` screens (table, -L, -q, -q -x, CSV queries, topo -m), the
kernel's Xid lines, `nvcc --version`, and the words a host says when it has no usable GPU."""

from __future__ import annotations

from tools.formats.format import Format, Sign, Told, sign
from tools.recon.parsers.cuda import parse_nvcc_version
from tools.recon.parsers.errors import ParseError
from tools.recon.parsers.gpu_absence import NO_GPU_SIGNS, no_gpu_reasons
from tools.recon.parsers.gpu_health import parse_xid_lines
from tools.recon.parsers.gpu_topology import parse_nvidia_smi_topo
from tools.recon.parsers.nvidia_smi import parse_nvidia_smi_list, parse_nvidia_smi_table
from tools.recon.parsers.nvidia_smi_q import (
    NvidiaSmiQReport,
    parse_nvidia_smi_q,
    parse_nvidia_smi_q_xml,
)
from tools.recon.parsers.nvidia_smi_query import parse_nvidia_smi_query_csv


def _gib(mib: int | None) -> str:
    return "?" if mib is None else f"{mib / 1024:.1f} GiB"


def _read_table(text: str) -> Told:
    report = parse_nvidia_smi_table(text)
    facts: dict[str, object] = {"driver": report.driver_version, "cuda": report.cuda_version}
    findings = [f"a GPU the driver cannot reach: {line}" for line in report.unreachable]
    for gpu in report.gpus:
        memory = (
            f"{_gib(gpu.memory_used_mib)} of {_gib(gpu.memory_total_mib)} used"
            if gpu.memory_supported
            else "memory not reported (unified memory)"
        )
        mig = f", MIG {gpu.mig_mode}" if gpu.mig_mode not in (None, "N/A") else ""
        facts[f"GPU {gpu.index}"] = f"{gpu.name}, {memory}{mig}"
        if gpu.faulted:
            findings.append(f"GPU {gpu.index} reads ERR!: the driver lost it")
    for process in report.processes:
        used = "memory cut by nvidia-smi" if process.memory_cut else _gib(process.memory_used_mib)
        facts[f"process {process.pid}"] = f"{process.name} on GPU {process.gpu_index} ({used})"
    if not report.gpus and not report.unreachable:
        findings.append("no GPU in the table")
    return facts, findings


def _read_list(text: str) -> Told:
    entries = parse_nvidia_smi_list(text)
    facts: dict[str, object] = {
        f"GPU {entry.index}": entry.name + (f", MIG {', '.join(entry.mig)}" if entry.mig else "")
        for entry in entries
    }
    findings = [
        f"GPU {entry.index} is split into {len(entry.mig)} MIG instances: an engine uses one "
        "instance, not the whole GPU"
        for entry in entries
        if entry.mig
    ]
    return facts, findings


def _q_told(report: NvidiaSmiQReport) -> Told:
    facts: dict[str, object] = {"driver": report.driver_version, "cuda": report.cuda_version}
    for index, gpu in enumerate(report.gpus):
        memory = (
            f"{_gib(gpu.memory_used_mib)} of {_gib(gpu.memory_total_mib)} used"
            if gpu.memory_supported
            else "memory not reported"
        )
        facts[f"GPU {index}"] = f"{gpu.product_name} ({gpu.bus_id}), {memory}"
        for process in gpu.processes:
            facts[f"process {process.pid}"] = f"{process.name} ({_gib(process.memory_used_mib)})"
    return facts, [] if report.gpus else ["no GPU in the report"]


def _read_query_csv(text: str) -> Told:
    result = parse_nvidia_smi_query_csv(text)
    facts: dict[str, object] = {"columns": ", ".join(result.fields)}
    findings = []
    for number, row in enumerate(result.rows):
        facts[f"row {number}"] = ", ".join(f"{key}={value}" for key, value in row.items())
        if "memory.total" in row and row["memory.total"] is None:
            findings.append(
                f"row {number}: GPU memory is not reported (N/A): on unified memory the usable "
                "amount is the system's available memory, not a GPU figure"
            )
    return facts, findings


def _read_topo(text: str) -> Told:
    topology = parse_nvidia_smi_topo(text)
    facts: dict[str, object] = {"GPUs": topology.gpus}
    if topology.interconnect is None:
        return facts, []
    facts["interconnect"] = topology.detail
    findings = (
        [f"no NVLink between GPUs: {topology.detail}"] if topology.interconnect != "nvlink" else []
    )
    return facts, findings


def _read_xid(text: str) -> Told:
    events = parse_xid_lines(text) or []
    if not events:
        raise ParseError("kernel lines with 'NVRM: Xid'", text)
    findings = [f"Xid {event.code} on {event.where}: {event.text}" for event in events]
    return {"Xid events": len(events)}, findings


def _read_nvcc(text: str) -> Told:
    info = parse_nvcc_version(text)
    if not info.present:
        return {"nvcc": "absent"}, ["nvcc is not in PATH: the CUDA toolkit version is unknown"]
    return {"CUDA toolkit": info.release, "build": info.build}, []


def _read_no_gpu(text: str) -> Told:
    meanings = no_gpu_reasons(text)
    if not meanings:
        raise ParseError("a line saying the host has no usable GPU", text)
    return {"usable GPUs": "none"}, [f"no usable GPU: {meaning}" for meaning in meanings]


FORMATS = (
    Format(
        "nvidia-smi",
        (
            sign(r"NVIDIA-SMI \S+\s+Driver Version:"),
            sign(r"^\|\s+Processes:", 0.5),
            sign(r"Unable to determine the device handle", 0.6),
            sign(r"^\| GPU\s+Name", 0.5),
            sign(r"^\|\s+\d+\s+\S.*\s(?:On|Off)\s+\|\s+[0-9A-Fa-f]{8}:"),
        ),
        _read_table,
    ),
    Format("nvidia-smi -L", (sign(r"^GPU \d+: .+ \(UUID: GPU-"),), _read_list),
    Format(
        "nvidia-smi -q",
        (
            sign(r"=+NVSMI LOG=+"),
            sign(r"^Attached GPUs\s+:", 0.5),
            sign(r"^\s*FB Memory Usage\s*$"),
        ),
        lambda text: _q_told(parse_nvidia_smi_q(text)),
    ),
    Format(
        "nvidia-smi -q -x",
        (sign(r"<nvidia_smi_log>"), sign(r"<\?xml", 0.3)),
        lambda text: _q_told(parse_nvidia_smi_q_xml(text)),
    ),
    Format(
        "nvidia-smi --query-* --format=csv",
        (
            sign(r"^(?:index|name|uuid|pid|driver_version|[a-z_]+\.[a-z_.]+)(?: \[[^\]]+\])?\s*,"),
            sign(r"\[MiB\]", 0.3),
        ),
        _read_query_csv,
    ),
    Format(
        "nvidia-smi topo -m",
        (
            sign(r"^\s*(?:\x1b\[\d+m)?GPU0\s+.*CPU Affinity"),
            sign(r"^GPU\d+\s+X\s", 0.5),
            sign(r"^Legend:", 0.3),
        ),
        _read_topo,
    ),
    Format("kernel log (NVRM Xid)", (sign(r"NVRM: Xid \("),), _read_xid),
    Format(
        "nvcc --version",
        (sign(r"nvcc: NVIDIA \(R\) Cuda compiler"), sign(r"\bnvcc not in PATH")),
        _read_nvcc,
    ),
    Format("no usable GPU", tuple(Sign(p.search) for p in NO_GPU_SIGNS), _read_no_gpu),
)
