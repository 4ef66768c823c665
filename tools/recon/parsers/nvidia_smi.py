"""`nvidia-smi` (the boxed table) and `nvidia-smi -L`.

On GB10 (DGX Spark) the memory cell reads `Not Supported`: the GPU shares system memory, so the
real budget comes from /proc/meminfo. That shows up here as `memory_supported=False`.

A GPU the driver lost after an Xid reads `ERR!` in its cells, its name too (`faulted`;
tests/fixtures/recon/generic_nvidia-smi_525_8xa30_err_gpu3_xid119.txt); a GPU the driver cannot
reach at all is left out of the table after a line `Unable to determine the device handle for
GPU1: 0000:34:00.0: Unknown Error` (`unreachable`; …_610_device_handle_unknown_error_gpu1.txt,
whose driver 610 banner says `KMD Version` and `CUDA UMD Version`). `nvidia-smi -L` lists MIG
instances under their GPU (`  MIG 3g.40gb     Device  0: (UUID: MIG-…)`).
"""

import re

from pydantic import BaseModel

from tools.recon.parsers.errors import ParseError
from tools.recon.parsers.units import parse_optional_float, parse_optional_int

DRIVER_VERSION = r"\d+\.\d+(?:\.\d+)?"
_BANNER = re.compile(
    rf"NVIDIA-SMI\s+(?P<smi>\S+)\s+(?:Driver|KMD) Version:\s+(?P<driver>{DRIVER_VERSION})"
    r"(?:\s+CUDA (?:UMD )?Version:\s+(?P<cuda>\d+\.\d+|N/A))?"
)
_GPU_ROW = re.compile(r"^\s*(?P<index>\d+)\s+(?P<name>.+?)\s+(?P<persistence>On|Off)\s*$")
_BUS_CELL = re.compile(
    r"^\s*(?P<bus_id>[0-9A-Fa-f]+:[0-9A-Fa-f]+:[0-9A-Fa-f]+\.\d)\s+(?P<disp>\S+)"
)
_STATE_ROW = re.compile(
    r"^\s*(?P<fan>\S+)\s+(?P<temp>\S+)\s+(?P<perf>\S+)\s+(?P<power>\S+)\s*/\s*(?P<cap>\S+)\s*$"
)
_MEMORY_CELL = re.compile(r"(?P<used>\d+)MiB\s*/\s*(?P<total>\d+)MiB")
_PROCESS_ROW = re.compile(
    r"^\|\s*(?P<gpu>\d+)\s+(?:(?P<gi>\S+)\s+(?P<ci>\S+)\s+)?(?P<pid>\d+)\s+"
    r"(?P<type>C\+G|M\+C|C|G|M)\s+(?P<name>.+?)\s+(?P<memory>\d+MiB|N/A|\d+\.\.\.)\s*\|$"
)
_LIST_ROW = re.compile(r"^GPU (?P<index>\d+): (?P<name>.+?) \(UUID: (?P<uuid>[^)]+)\)\s*$")
_MIG_ROW = re.compile(r"^MIG (?P<profile>\S+)\s+Device\s+\d+: \(UUID: MIG-")
_UNREACHABLE = re.compile(r"^Unable to determine the device handle for GPU.*$", re.M)
ERR = "ERR!"


class GpuProcess(BaseModel):
    """`memory_cut`: nvidia-smi printed the first digits and `...` (a value too wide for its
    column, e.g. `10707...` for ~107 GiB on a Spark): the amount is unknown, not zero."""

    gpu_index: int
    pid: int
    type: str
    name: str
    memory_used_mib: int | None
    memory_cut: bool = False


class GpuInfo(BaseModel):
    index: int
    name: str
    bus_id: str | None = None
    persistence: bool | None = None
    display_active: bool | None = None
    volatile_uncorrected_ecc: str | None = None
    fan_percent: int | None = None
    temperature_c: int | None = None
    performance_state: str | None = None
    power_w: float | None = None
    power_cap_w: float | None = None
    memory_used_mib: int | None = None
    memory_total_mib: int | None = None
    memory_supported: bool = True
    utilization_percent: int | None = None
    compute_mode: str | None = None
    mig_mode: str | None = None
    faulted: bool = False  # a cell reads ERR!: the driver lost the GPU


class NvidiaSmiReport(BaseModel):
    smi_version: str
    driver_version: str
    cuda_version: str | None
    gpus: list[GpuInfo]
    processes: list[GpuProcess]
    unreachable: list[str] = []  # the driver's own line for each GPU it cannot reach


class GpuListEntry(BaseModel):
    index: int
    name: str
    uuid: str
    mig: list[str] = []  # the profiles of its MIG instances (`3g.40gb`), when MIG is on


def parse_nvidia_smi_table(text: str) -> NvidiaSmiReport:
    """Read the default `nvidia-smi` screen: banner versions, one entry per GPU, processes."""
    banner = _BANNER.search(text)
    unreachable = [line.strip() for line in _UNREACHABLE.findall(text)]
    if banner is None and (unreachable or "No devices were found" in text):  # no table at all
        return NvidiaSmiReport(
            smi_version="", driver_version="", cuda_version=None, gpus=[], processes=[],
            unreachable=unreachable,
        )  # fmt: skip
    if banner is None:  # a paste of the GPU rows alone (its header cut): versions unknown
        gpus = _parse_gpu_blocks(text, headed=False)
        if not gpus:
            raise ParseError("the `nvidia-smi` table (a banner with 'Driver Version:')", text)
        return NvidiaSmiReport(
            smi_version="", driver_version="", cuda_version=None, gpus=gpus, processes=[],
            unreachable=unreachable,
        )  # fmt: skip
    gpu_part, _, process_part = text.partition("Processes:")
    cuda = banner["cuda"]
    return NvidiaSmiReport(
        smi_version=banner["smi"],
        driver_version=banner["driver"],
        cuda_version=None if cuda in (None, "N/A") else cuda,
        gpus=_parse_gpu_blocks(gpu_part),
        processes=_parse_processes(process_part),
        unreachable=unreachable,
    )


def _cells(line: str) -> list[str]:
    return line.strip().strip("|").split("|")


def _parse_gpu_blocks(text: str, *, headed: bool = True) -> list[GpuInfo]:
    """Each GPU is a run of boxed rows between `+---+` rules after the `===` header rule (or
    from the start, for rows pasted without their header)."""
    _, sep, body = text.partition("|====")
    if not sep:
        if headed:
            return []
        body = "\n" + text
    blocks: list[list[list[str]]] = [[]]
    for line in (raw.strip() for raw in body.splitlines()[1:]):
        if line.startswith("+"):
            blocks.append([])
        elif line.startswith("|"):
            blocks[-1].append(_cells(line))
        elif blocks[-1]:
            break
    return [gpu for gpu in (_parse_gpu_block(rows) for rows in blocks) if gpu is not None]


def _parse_gpu_block(rows: list[list[str]]) -> GpuInfo | None:
    if not rows or len(rows[0]) < 3:
        return None
    head = _GPU_ROW.match(rows[0][0])
    if head is None:
        return None
    gpu = GpuInfo(
        index=int(head["index"]), name=head["name"], persistence=head["persistence"] == "On"
    )
    gpu.faulted = any(ERR in cell for row in rows for cell in row)
    bus = _BUS_CELL.match(rows[0][1])
    if bus is not None:
        gpu.bus_id = bus["bus_id"]
        gpu.display_active = {"On": True, "Off": False}.get(bus["disp"])
    gpu.volatile_uncorrected_ecc = _value_or_none(rows[0][2])
    if len(rows) > 1 and len(rows[1]) >= 3:
        _fill_state_row(gpu, rows[1])
    if len(rows) > 2 and len(rows[2]) >= 3:
        gpu.mig_mode = _value_or_none(rows[2][2])
    return gpu


def _fill_state_row(gpu: GpuInfo, cells: list[str]) -> None:
    state = _STATE_ROW.match(cells[0])
    if state is not None:
        gpu.fan_percent = parse_optional_int(state["fan"].rstrip("%"))
        gpu.temperature_c = parse_optional_int(state["temp"].rstrip("C"))
        gpu.performance_state = _value_or_none(state["perf"])
        gpu.power_w = parse_optional_float(state["power"])
        gpu.power_cap_w = parse_optional_float(state["cap"])
    memory = _MEMORY_CELL.search(cells[1])
    if memory is not None:
        gpu.memory_used_mib = int(memory["used"])
        gpu.memory_total_mib = int(memory["total"])
    gpu.memory_supported = memory is not None
    util_and_mode = cells[2].split()
    if util_and_mode:
        gpu.utilization_percent = parse_optional_int(util_and_mode[0].rstrip("%"))
        gpu.compute_mode = " ".join(util_and_mode[1:]) or None


def _value_or_none(cell: str) -> str | None:
    value = cell.strip()
    return None if value in ("", "N/A") else value


def _parse_processes(text: str) -> list[GpuProcess]:
    processes = []
    for line in text.splitlines():
        match = _PROCESS_ROW.match(line.strip())
        if match is None:
            continue
        memory = match["memory"]
        processes.append(
            GpuProcess(
                gpu_index=int(match["gpu"]),
                pid=int(match["pid"]),
                type=match["type"],
                name=match["name"],
                memory_used_mib=int(memory[:-3]) if memory.endswith("MiB") else None,
                memory_cut=memory.endswith("..."),
            )
        )
    return processes


def parse_nvidia_smi_list(text: str) -> list[GpuListEntry]:
    """Read `nvidia-smi -L` (`No devices were found`: none); MIG lines join their GPU."""
    entries: list[GpuListEntry] = []
    for line in text.splitlines():
        match = _LIST_ROW.match(line.strip())
        if match is not None:
            entries.append(
                GpuListEntry(index=int(match["index"]), name=match["name"], uuid=match["uuid"])
            )
        elif (mig := _MIG_ROW.match(line.strip())) is not None and entries:
            entries[-1].mig.append(mig["profile"])
    if not entries and text.strip() and "No devices were found" not in text:
        raise ParseError("`nvidia-smi -L` lines like 'GPU 0: NAME (UUID: GPU-…)'", text)
    return entries
