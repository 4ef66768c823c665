"""GPU faults a real host shows, from the scenario's `gpu.faulted` / `gpu.unreachable` /
`gpu.mig_instances` and the host's `kernel_log` and `earlyoom`; each as real output prints it:

- a GPU lost after an Xid reads `ERR!` in its cells and its name (8×A30 after Xid 119, tests/
  fixtures/recon/generic_nvidia-smi_525_8xa30_err_gpu3_xid119.txt);
- a GPU the driver cannot reach is left out of the table, after `Unable to determine the device
  handle for GPU1: 0000:34:00.0: Unknown Error` (…_610_device_handle_unknown_error_gpu1.txt);
  one that fell off the bus (`gpu.fallen`) is left out silently, the kernel log saying why
  (`NVRM: The NVIDIA GPU 0000:b3:00.0 … has fallen off the bus`, NVIDIA/NVSentinel#155);
- MIG on: `MIG M.` reads `Enabled` and `nvidia-smi -L` lists the instances under their GPU
  (…_nvidia-smi_L_a100_mig_4_instances.txt);
- `lspci -d 10de:` lists every GPU on the bus, reachable or not, as a `3D controller` (an AWS
  p5's lspci, generic_lspci_p5_8xh100_nvswitch.txt); a GB10 host lists none here [U: its
  integrated GPU's PCI class was not captured];
- `dmesg` prints the scenario's kernel log (`NVRM: Xid (PCI:…): 119, …`,
  generic_dmesg_nvrm_xid119_gsp_timeout.txt); `pgrep -x earlyoom` its pid when it runs.
"""

from __future__ import annotations

import sys
from typing import Any

EARLYOOM_PID = 811


def unreachable_lines(state: dict[str, Any], rows: list[dict[str, Any]]) -> list[str]:
    """The driver's line for each GPU it cannot reach (printed before the table)."""
    lost = set(state["gpu"].get("unreachable") or [])
    return [
        f"Unable to determine the device handle for GPU{r['index']}: {r['bus_id'][4:]}: "
        "Unknown Error"
        for r in rows
        if r["index"] in lost
    ]


def err_rows(row: dict[str, Any]) -> list[str]:
    """The three rows of a GPU the driver lost, in the driver 580 table's column widths."""
    memory = f"{0:>7}MiB / {row['total'] or 0:>6}MiB"
    cells = [
        (f"{row['index']:>4}  ERR!".ljust(37) + "On  ", f"   {row['bus_id']} Off ", "ERR! "),
        ("ERR!  ERR!     ERR!          ERR! / ERR! ", f" {memory} ", "ERR!      Default "),
        ("", "", "ERR! "),
    ]
    return [f"|{a:<41}|{b:<24}|{c:>22}|" for a, b, c in cells]


def mig_lines(state: dict[str, Any], index: int) -> list[str]:
    """`nvidia-smi -L`'s lines for the MIG instances of GPU `index` (GPU 0 holds them)."""
    if index != 0:
        return []
    return [
        f"  MIG {profile:<12}Device {n:>2}: (UUID: MIG-{state['gpu']['uuid'][4:-2]}{n:02x})"
        for n, profile in enumerate(state["gpu"].get("mig_instances") or [])
    ]


def run_lspci(args: list[str], state: dict[str, Any]) -> int:
    gpu = state["gpu"]
    if gpu["memory_total_mib"] is None:
        return 0
    bus_ids = gpu["bus_ids"] or [gpu["bus_id"]]
    for index in range(gpu["count"]):
        bus = bus_ids[index % len(bus_ids)][9:].lower()
        sys.stdout.write(f"{bus} 3D controller: NVIDIA Corporation {gpu['name']} (rev a1)\n")
    return 0


def run_dmesg(args: list[str], state: dict[str, Any]) -> int:
    for n, line in enumerate(state.get("kernel_log") or []):
        sys.stdout.write(f"[{1843.308145 + n:>12.6f}] {line}\n")
    return 0


def run_pgrep(args: list[str], state: dict[str, Any]) -> int:
    if args[-1:] == ["earlyoom"] and state.get("earlyoom"):
        sys.stdout.write(f"{EARLYOOM_PID}\n")
        return 0
    return 1
