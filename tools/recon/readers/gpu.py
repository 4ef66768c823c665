"""GPUs and the memory a model may use: discrete GPU memory, or unified memory on GB10."""

from __future__ import annotations

import re

from tools.recon import parsers as p
from tools.recon.parsers.gpu_health import count_pci_gpus, parse_xid_lines
from tools.recon.readers.section_reader import SectionReader
from tools.world.facts import (
    Gpu,
    GpuFacts,
    GpuProcessFact,
    MemoryFacts,
)

MIB = 1024**2
_PROFILE = re.compile(r"\.(\d+(?:\.\d+)?)gb$", re.I)


def read_gpu(reader: SectionReader) -> tuple[GpuFacts, bool, tuple[int | None, int | None]]:
    """GPU facts, whether memory is unified, and (GPU total, GPU free) bytes when discrete."""
    group = GpuFacts()
    table = reader.read(group, "nvidia-smi", p.parse_nvidia_smi_table)
    listing = reader.read(group, "nvidia-smi-list", p.parse_nvidia_smi_list) or []
    query = reader.read(group, "nvidia-smi-query", p.parse_nvidia_smi_query_csv)
    uuids = {entry.index: entry.uuid for entry in listing}
    migs = {entry.index: entry.mig for entry in listing}
    rows = {row.get("index"): row for row in (query.rows if query else [])}
    if table is not None and not table.gpus and not table.unreachable:
        said = reader.sections["nvidia-smi"].output.strip().splitlines()
        reader.note(group, f"nvidia-smi listed no GPU: {said[0][:160] if said else 'no output'}")
    if table is not None:
        group.driver_version = table.driver_version or None
        group.cuda_version = table.cuda_version
        group.unreachable = table.unreachable
        group.processes = [
            GpuProcessFact(
                pid=proc.pid,
                name=proc.name,
                memory_bytes=proc.memory_used_mib * MIB if proc.memory_used_mib else None,
                memory_cut=proc.memory_cut,
            )
            for proc in table.processes
        ]
        for info in table.gpus:
            row = rows.get(info.index, {})
            total = _mib(row.get("memory.total")) or _mib(info.memory_total_mib)
            used = _mib(row.get("memory.used")) or _mib(info.memory_used_mib)
            group.gpus.append(
                Gpu(
                    index=info.index,
                    name=info.name,
                    uuid=uuids.get(info.index),
                    bus_id=info.bus_id,
                    memory_total_bytes=total,
                    memory_used_bytes=used,
                    memory_supported=info.memory_supported and total is not None,
                    faulted=info.faulted,
                    mig_mode=info.mig_mode,
                    mig_instances=migs.get(info.index, []),
                )
            )
    elif listing:
        group.gpus = [
            Gpu(index=e.index, name=e.name, uuid=e.uuid, mig_instances=e.mig) for e in listing
        ]
    if len(group.gpus) > 1:
        topology = reader.read(group, "nvidia-smi-topo", p.parse_nvidia_smi_topo)
        if topology is not None and topology.interconnect is not None:
            group.interconnect, group.interconnect_detail = (
                topology.interconnect,
                topology.detail,
            )
    if group.driver_version is None and query is not None and query.rows:
        group.driver_version = _str(query.rows[0].get("driver_version"))
    _read_health(reader, group)
    healthy = [gpu for gpu in group.gpus if not gpu.faulted]  # a lost GPU gives no memory
    unified = any(not gpu.memory_supported or "GB10" in gpu.name for gpu in healthy)
    if unified:
        return group, unified, (None, None)
    return group, unified, usable_gpu_memory(healthy)


def usable_gpu_memory(gpus: list[Gpu]) -> tuple[int | None, int | None]:
    """(total, free) bytes of GPU memory one engine can use: the whole GPUs' memory; a GPU in
    MIG mode offers only its instances, each a device of its own that an engine uses alone, so
    where every GPU is split the most an engine gets is the largest instance (its profile's
    size, `3g.40gb`: 40 GB, a little under the instance's real size)."""
    split = [gpu for gpu in gpus if gpu.mig_mode == "Enabled" or gpu.mig_instances]
    whole = [gpu for gpu in gpus if gpu not in split and gpu.memory_total_bytes]
    if whole:
        total = sum(gpu.memory_total_bytes or 0 for gpu in whole)
        return total, total - sum(gpu.memory_used_bytes or 0 for gpu in whole)
    instances = [_instance_bytes(p) for gpu in split for p in gpu.mig_instances]
    if split:
        largest = max((size for size in instances if size), default=0)
        return largest, largest
    return None, None


def _instance_bytes(profile: str) -> int | None:
    """A MIG profile's memory (`3g.40gb` → 40 GB), None when the name does not say."""
    match = _PROFILE.search(profile)
    return round(float(match[1]) * 1e9) if match else None


def _read_health(reader: SectionReader, group: GpuFacts) -> None:
    """What lspci and the kernel log add: GPUs on the bus, the driver's Xid lines."""
    if "lspci-nvidia" in reader.sections:
        group.pci_gpus = reader.read(group, "lspci-nvidia", count_pci_gpus)
    if "xid" in reader.sections:
        events = reader.read(group, "xid", parse_xid_lines)
        group.xid_events = [f"Xid {e.code} at {e.where}: {e.text}" for e in events or []]


def _mib(value: object) -> int | None:
    return int(value) * MIB if isinstance(value, int | float) and value else None


def _str(value: object) -> str | None:
    return str(value) if value is not None else None


def read_memory(
    reader: SectionReader,
    unified: bool,
    gpu_memory: tuple[int | None, int | None],
    gpu_count: int | None = None,
) -> MemoryFacts:
    group = MemoryFacts(unified_memory=unified, gpu_count=gpu_count)
    group.gpu_total_bytes, group.gpu_free_bytes = gpu_memory
    _read_sizes(reader, group)
    if "earlyoom" in reader.sections:
        said = reader.read(group, "earlyoom", lambda text: text.strip())
        group.earlyoom_running = bool(said) if said is not None else None
    return group


def _read_sizes(reader: SectionReader, group: MemoryFacts) -> None:
    """Total, available, free and swap: /proc/meminfo, else `free -b`."""
    meminfo = reader.read(group, "meminfo", p.parse_meminfo)
    if meminfo is not None:
        group.total_bytes = meminfo.total_bytes
        group.available_bytes = meminfo.available_bytes
        group.free_bytes = meminfo.free_bytes
        group.swap_total_bytes = meminfo.swap_total_bytes
        if meminfo.swap_total_bytes is not None and meminfo.swap_free_bytes is not None:
            group.swap_used_bytes = meminfo.swap_total_bytes - meminfo.swap_free_bytes
        return
    free = reader.read(group, "free", p.parse_free)
    if free is not None:
        group.total_bytes = free.memory.total_bytes
        group.available_bytes = free.memory.available_bytes
        group.free_bytes = free.memory.free_bytes
        if free.swap is not None:
            group.swap_total_bytes, group.swap_used_bytes = (
                free.swap.total_bytes,
                free.swap.used_bytes,
            )
