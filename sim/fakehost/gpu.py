"""`nvidia-smi` as driver 580 prints it: on a GB10 memory fields are `Not Supported` / `[N/A]`
(shared/fixtures/recon/spark_nvidia-smi_*.txt); on GPUs with their own memory, such as an 8-GPU
H100 node, every GPU gets its row with real numbers (`0MiB /  81559MiB`, ECC `0`, MIG
`Disabled`: driver 580.95.05 on H100, public GitHub file index id 53065424572; eight H100 rows,
index id 70867108761), and the query's `memory.free` leaves out the reserved memory
(`81559 MiB, 0 MiB, 81080 MiB`, index id 54585755083).
"""

from __future__ import annotations

import sys
import time
from typing import Any

from .gpu_faults import err_rows, mig_lines, unreachable_lines

_BAR = "+-----------------------------------------------------------------------------------------+"
_SPLIT = (
    "+-----------------------------------------+------------------------+----------------------+"
)
_HEADER = [
    "| GPU  Name                 Persistence-M | Bus-Id          Disp.A | Volatile Uncorr. ECC |",
    "| Fan  Temp   Perf          Pwr:Usage/Cap |           Memory-Usage | GPU-Util  Compute M. |",
    "|                                         |                        |               MIG M. |",
    "|=========================================+========================+======================|",
]
_PROC_HEADER = [
    "| Processes:                                                                              |",
    "|  GPU   GI   CI              PID   Type   Process name                        GPU Memory |",
    "|        ID   ID                                                               Usage      |",
    "|=========================================================================================|",
]


def gpu_processes(state: dict[str, Any]) -> list[dict[str, Any]]:
    """Desktop processes from the scenario plus one per running container that uses the GPU."""
    procs = list(state["gpu"]["processes"])
    for container in state["docker"]["containers"].values():
        if container["state"] == "running" and container.get("gpu_process"):
            procs.append(container["gpu_process"])
    return procs


def _uuid(template: str, index: int) -> str:
    if index == 0:
        return template
    return template[:-2] + f"{(int(template[-2:], 16) + index) % 256:02x}"


def gpu_rows(state: dict[str, Any]) -> list[dict[str, Any]]:
    """One entry per GPU: index, UUID, bus id and memory in MiB (None where not supported)."""
    gpu = state["gpu"]
    procs = gpu_processes(state)
    bus_ids = gpu["bus_ids"] or [gpu["bus_id"]]
    rows = []
    for index in range(gpu["count"]):
        total = gpu["memory_total_mib"]
        used = sum(p["memory_mib"] for p in procs if p.get("gpu", 0) == index)
        rows.append(
            {
                "index": index,
                "uuid": _uuid(gpu["uuid"], index),
                "bus_id": bus_ids[index % len(bus_ids)],
                "total": total,
                "used": None if total is None else used,
                "free": None if total is None else total - used - gpu["memory_reserved_mib"],
            }
        )
    return rows


def render_table(state: dict[str, Any], now: float) -> str:
    gpu = state["gpu"]
    disp = "On" if gpu["display_active"] else "Off"
    cap = "N/A " if gpu["power_cap_w"] is None else f"{gpu['power_cap_w']:>3}W"
    rows = gpu_rows(state)
    lost = {*(gpu.get("unreachable") or []), *(gpu.get("fallen") or [])}
    lines = [
        *unreachable_lines(state, rows),
        time.strftime("%a %b %e %H:%M:%S %Y", time.localtime(now)) + "       ",
        _BAR,
        f"| NVIDIA-SMI {gpu['driver']:<23}Driver Version: {gpu['driver']:<15}"
        f"CUDA Version: {gpu['cuda']:<9}|",
        _SPLIT,
        *_HEADER,
    ]
    mig = "Enabled" if gpu.get("mig_instances") else gpu["mig_mode"]
    for row in rows:
        if row["index"] in lost:
            continue
        if row["index"] in (gpu.get("faulted") or []):
            lines += [*err_rows(row), _SPLIT]
            continue
        memory = (
            f"{'Not Supported':<22}"
            if row["total"] is None
            else f"{row['used']:>7}MiB / {row['total']:>6}MiB"
        )
        lines += [
            f"|{row['index']:>4}  {gpu['name']:<31}On  |   {row['bus_id']} {disp:>3} |"
            f"{gpu['ecc_errors']:>21} |",
            f"| N/A  {gpu['temp_c']:>3}C    {gpu['perf']}  {round(gpu['power_w']):>13}W /  {cap} "
            f"| {memory} | {gpu['util_pct']:>6}%      Default |",
            "|" + " " * 41 + "|" + " " * 24 + f"|{mig:>21} |",
            _SPLIT,
        ]
    lines += ["", _BAR, *_PROC_HEADER]
    procs = gpu_processes(state)
    if not procs:
        lines.append(f"|  {'No running processes found':<87}|")
    for proc in procs:
        name = proc["name"] if len(proc["name"]) <= 32 else "..." + proc["name"][-29:]
        lines.append(
            f"|{proc.get('gpu', 0):>5}   N/A  N/A{proc['pid']:>16}{proc['type']:>7}   {name:<32}"
            f"{process_memory(proc['memory_mib']):>14} |"
        )
    lines.append(_BAR)
    return "\n".join(lines) + "\n"


def process_memory(mib: int) -> str:
    """The process table's memory cell: at most 8 characters, so from 100000 MiB on nvidia-smi
    prints the first five digits and `...` (a Spark's `VLLM::EngineCore   10707... |`,
    tests/fixtures/recon/spark_nvidia-smi_580.126.09_enginecore_memory_cut.txt; an H200's
    `13020... |`, public GitHub file index id 6971184898)."""
    text = f"{mib}MiB"
    return text if len(text) <= 8 else f"{text[:5]}..."


def _mib(value: int | None) -> tuple[str, str]:
    return ("[N/A]", "") if value is None else (str(value), " MiB")


def _query_value(field: str, state: dict[str, Any], row: dict[str, Any]) -> tuple[str, str]:
    """(value, unit) of one `--query-gpu` field for one GPU; unit is what `nounits` strips."""
    gpu = state["gpu"]
    values: dict[str, tuple[str, str]] = {
        "index": (str(row["index"]), ""),
        "name": (gpu["name"], ""),
        "uuid": (row["uuid"], ""),
        "gpu_uuid": (row["uuid"], ""),
        "serial": (gpu["serial"], ""),
        "driver_version": (gpu["driver"], ""),
        "pci.bus_id": (row["bus_id"], ""),
        "pstate": (gpu["perf"], ""),
        "temperature.gpu": (str(gpu["temp_c"]), ""),
        "utilization.gpu": (str(gpu["util_pct"]), " %"),
        "utilization.memory": ("0", " %"),
        "power.draw": (f"{gpu['power_w']:.2f}", " W"),
        "power.limit": ("[N/A]", "")
        if gpu["power_cap_w"] is None
        else (f"{gpu['power_cap_w']:.2f}", " W"),
        "compute_cap": (gpu["compute_cap"], ""),
        "persistence_mode": ("Enabled", ""),
        "display_active": ("Enabled" if gpu["display_active"] else "Disabled", ""),
        "count": (str(gpu["count"]), ""),
        "clocks.sm": (str(gpu["clocks_sm_mhz"]), " MHz"),
        "memory.total": _mib(row["total"]),
        "memory.used": _mib(row["used"]),
        "memory.free": _mib(row["free"]),
        "memory.reserved": _mib(None if row["total"] is None else gpu["memory_reserved_mib"]),
    }
    return values[field]


_HEADER_UNITS = {
    "memory.total": " [MiB]",
    "memory.used": " [MiB]",
    "memory.free": " [MiB]",
    "memory.reserved": " [MiB]",
    "utilization.gpu": " [%]",
    "utilization.memory": " [%]",
    "power.draw": " [W]",
    "power.limit": " [W]",
    "clocks.sm": " [MHz]",
}


def render_query(fields: list[str], fmt: set[str], state: dict[str, Any]) -> tuple[str, int]:
    rows = gpu_rows(state)
    for field in fields:
        try:
            _query_value(field, state, rows[0])
        except KeyError:
            return f'Field "{field}" is not a valid field to query.\n\n', 2
    units = "nounits" not in fmt
    lines = []
    if "noheader" not in fmt:
        lines.append(", ".join(f + (_HEADER_UNITS.get(f, "") if units else "") for f in fields))
    for row in rows:
        cells = []
        for field in fields:
            value, unit = _query_value(field, state, row)
            cells.append(value + (unit if units and not value.startswith("[") else ""))
        lines.append(", ".join(cells))
    return "\n".join(lines) + "\n", 0


def render_list(state: dict[str, Any]) -> str:
    gone = (state["gpu"].get("unreachable") or []) + (state["gpu"].get("fallen") or [])
    name, lost = state["gpu"]["name"], set(gone)
    lines = []
    for r in gpu_rows(state):
        if r["index"] not in lost:
            lines += [
                f"GPU {r['index']}: {name} (UUID: {r['uuid']})",
                *mig_lines(state, r["index"]),
            ]
    return "".join(line + "\n" for line in lines)


def _watts(value: int | None) -> str:
    return "N/A" if value is None else f"{value:.2f} W"


def _mib_text(value: int | None) -> str:
    return "N/A" if value is None else f"{value} MiB"


def render_q(state: dict[str, Any], now: float) -> str:
    """`nvidia-smi -q`, the fields recon and people look at; one block per GPU."""
    gpu = state["gpu"]
    unified = gpu["memory_total_mib"] is None
    pairs: list[tuple[int, str, str | None]] = [
        (0, "Timestamp", time.strftime("%a %b %e %H:%M:%S %Y", time.localtime(now))),
        (0, "Driver Version", gpu["driver"]),
        (0, "CUDA Version", gpu["cuda"]),
        (0, "", None),
        (0, "Attached GPUs", str(gpu["count"])),
    ]
    for row in gpu_rows(state):
        reserved = None if unified else gpu["memory_reserved_mib"]
        pairs += [
            (0, f"GPU {row['bus_id']}", None),
            (1, "Product Name", gpu["name"]),
            (1, "Product Brand", gpu["brand"]),
            (1, "Product Architecture", gpu["architecture"]),
            (1, "Display Mode", "Requested functionality has been deprecated"),
            (1, "Display Active", "Enabled" if gpu["display_active"] else "Disabled"),
            (1, "Persistence Mode", "Enabled"),
            *([(1, "Addressing Mode", "ATS")] if unified else []),
            (1, "MIG Mode", None),
            (2, "Current", gpu["mig_mode"]),
            (2, "Pending", gpu["mig_mode"]),
            (1, "Serial Number", gpu["serial"]),
            (1, "GPU UUID", row["uuid"]),
            (1, "Minor Number", str(row["index"])),
            (1, "FB Memory Usage", None),
            (2, "Total", _mib_text(row["total"])),
            (2, "Reserved", _mib_text(reserved)),
            (2, "Used", _mib_text(row["used"])),
            (2, "Free", _mib_text(row["free"])),
            (1, "Compute Mode", "Default"),
            (1, "Utilization", None),
            (2, "Gpu", f"{gpu['util_pct']} %"),
            (2, "Memory", "N/A" if unified else "0 %"),
            (1, "Temperature", None),
            (2, "GPU Current Temp", f"{gpu['temp_c']} C"),
            (1, "GPU Power Readings", None),
            (2, "Average Power Draw", f"{gpu['power_w']:.2f} W"),
            (2, "Current Power Limit", _watts(gpu["power_cap_w"])),
            (1, "Processes", None if gpu_processes(state) else "None"),
        ]
    lines = ["", "==============NVSMI LOG==============", ""]
    for depth, key, value in pairs:
        if not key:
            lines.append("")
        elif value is None:
            lines.append("    " * depth + key)
        else:
            lines.append(f"{'    ' * depth + key:<42}: {value}")
    return "\n".join(lines) + "\n\n"


_TOPO_LEGEND = "\n".join(
    [
        "",
        "Legend:",
        "",
        "  X    = Self",
        "  SYS  = Connection traversing PCIe as well as the SMP interconnect between NUMA nodes"
        " (e.g., QPI/UPI)",
        "  NODE = Connection traversing PCIe as well as the interconnect between PCIe Host Bridges"
        " within a NUMA node",
        "  PHB  = Connection traversing PCIe as well as a PCIe Host Bridge (typically the CPU)",
        "  PXB  = Connection traversing multiple PCIe bridges (without traversing the PCIe Host"
        " Bridge)",
        "  PIX  = Connection traversing at most a single PCIe bridge",
        "  NV#  = Connection traversing a bonded set of # NVLinks",
        "",
    ]
)


def render_gpu_matrix(state: dict[str, Any]) -> str:
    """Several GPUs joined by the scenario's `gpu.link` (NV18: an HGX H100 board's NVSwitch), as
    an 8×H100 VM printed it (tests/fixtures/recon/generic_nvidia-smi_topo_m_8xh100_nv18.txt)."""
    count, link, cpus = state["gpu"]["count"], state["gpu"]["link"], state["cpus"]
    names = [f"GPU{i}" for i in range(count)]
    lines = ["\t" + "\t".join([*names, "CPU Affinity", "NUMA Affinity", "GPU NUMA ID"])]
    for i, name in enumerate(names):
        cells = [" X " if j == i else link for j in range(count)]
        lines.append("\t".join([name, *cells, f"0-{cpus - 1}", "0", "", "N/A"]))
    return "\n".join(lines) + "\n" + _TOPO_LEGEND


def render_topo(state: dict[str, Any]) -> str:
    nics = sorted(
        (n for n in state["nics"].values() if n.get("rdma_dev")), key=lambda n: n["pci"] or ""
    )
    names = [f"NIC{i}" for i in range(len(nics))]
    cpus = state["cpus"]
    lines = ["\t" + "\t".join(["GPU0", *names, "CPU Affinity", "NUMA Affinity", "GPU NUMA ID"])]
    lines.append("\t".join(["GPU0", " X ", *["NODE"] * len(nics), f"0-{cpus - 1}", "0", "", "N/A"]))
    for i, nic in enumerate(nics):
        row = [names[i], "NODE"]
        for j, other in enumerate(nics):
            same_bus = nic["pci"].split(".")[0] == other["pci"].split(".")[0]
            row.append(" X " if i == j else ("PIX" if same_bus else "NODE"))
        lines.append("\t".join([*row, "", "", "", ""]))
    legend = [f"  {names[i]}: {nic['rdma_dev']}" for i, nic in enumerate(nics)]
    return "\n".join(lines) + "\n" + _TOPO_LEGEND + "\nNIC Legend:\n\n" + "\n".join(legend) + "\n"


def run_nvidia_smi(args: list[str], state: dict[str, Any]) -> int:
    now = time.time()
    if not args:
        sys.stdout.write(render_table(state, now))
        return 0
    if args[0] == "topo":
        if "-m" not in args:
            sys.stderr.write(
                "Invalid combination of input arguments. Please run 'nvidia-smi -h' for help.\n"
            )
            return 2
        if state["gpu"]["count"] > 1 and state["gpu"].get("link"):
            sys.stdout.write(render_gpu_matrix(state))
            return 0
        if state["gpu"]["count"] > 1:
            sys.stderr.write(
                "nvidia-smi topo -m: this simulated host does not model the NVLink/PCIe topology "
                f"of its {state['gpu']['count']} GPUs\n"
            )
            return 2
        sys.stdout.write(render_topo(state))
        return 0
    if args[0] in ("-L", "--list-gpus"):
        sys.stdout.write(render_list(state))
        return 0
    if args[0] in ("-q", "--query"):
        sys.stdout.write(render_q(state, now))
        return 0
    fields: list[str] = []
    fmt: set[str] = set()
    for arg in args:
        if arg.startswith("--query-gpu="):
            fields = [f.strip() for f in arg.split("=", 1)[1].split(",") if f.strip()]
        elif arg.startswith("--format="):
            fmt = {f.strip() for f in arg.split("=", 1)[1].split(",")}
        elif arg in ("-i", "--id=0", "0"):  # GPU 0 only on a one-GPU host
            continue
        else:
            sys.stderr.write(
                "Invalid combination of input arguments. Please run 'nvidia-smi -h' for help.\n"
            )
            return 2
    if not fields or "csv" not in fmt:
        sys.stderr.write(
            "Invalid combination of input arguments. Please run 'nvidia-smi -h' for help.\n"
        )
        return 2
    text, code = render_query(fields, fmt, state)
    (sys.stdout if code == 0 else sys.stderr).write(text)
    return code
