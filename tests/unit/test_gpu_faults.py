"""GPU faults read from real output into findings with their evidence and fix: a GPU lost after
an Xid (ERR! cells), one the driver cannot reach, GPUs missing from what the bus holds, MIG on,
and the driver's Xid lines in the kernel log (tests/fixtures/recon/, each with its source)."""

from __future__ import annotations

from agent.world.model import WorldModel
from tests.support.captured_host import WHEN, host_from
from tools.checks import compute_findings, preflight_findings
from tools.recon.probe_parse import facts_from_sections
from tools.recon.sections import Section

A30_ERR = "generic_nvidia-smi_525_8xa30_err_gpu3_xid119.txt"
XID_119 = "generic_dmesg_nvrm_xid119_gsp_timeout.txt"
RTX_LOST = "generic_nvidia-smi_610_device_handle_unknown_error_gpu1.txt"


def _found(hosts, kind: str):
    return [f for f in compute_findings(hosts) if f.kind == kind]


def test_a_gpu_reading_err_is_lost_not_a_gpu_named_err() -> None:
    host = host_from("a30", {"nvidia-smi": A30_ERR, "xid": XID_119})

    lost = _found({"a30": host}, "gpu_lost")
    xid = _found({"a30": host}, "gpu_xid_errors")

    assert [g.index for g in host.gpu.gpus if g.faulted] == [3] and len(host.gpu.gpus) == 8
    assert lost[0].severity == "blocker" and "GPU 3 (00000000:61:00.0)" in lost[0].message
    assert "sudo nvidia-smi -r -i 3" in (lost[0].fix or "")
    assert host.memory.gpu_total_bytes == 7 * 24576 * 1024**2  # the lost GPU's memory not counted
    assert "Xid 119 (GSP RPC timeout)" in xid[0].message and xid[0].evidence


def test_a_gpu_the_driver_cannot_reach_is_a_finding_and_the_others_are_read() -> None:
    host = host_from("box", {"nvidia-smi": RTX_LOST})

    unreachable = _found({"box": host}, "gpu_unreachable")

    assert [g.index for g in host.gpu.gpus] == [0, 2, 3]
    assert host.gpu.driver_version == "610.57.04" and host.gpu.cuda_version == "13.3"
    assert unreachable[0].message.endswith(
        "Unable to determine the device handle for GPU1: 0000:34:00.0: Unknown Error"
    )
    assert unreachable[0].severity == "blocker" and unreachable[0].needs_person


def test_only_the_unreachable_line_still_gives_a_finding_and_no_budget() -> None:
    said = "Unable to determine the device handle for GPU0000:08:00.0: Unknown Error\n"
    host = facts_from_sections("box", {"nvidia-smi": Section("nvidia-smi", said, 255)}, WHEN)

    assert _found({"box": host}, "gpu_unreachable") and host.memory.budget_bytes is None


def test_fewer_gpus_than_the_pci_bus_holds() -> None:
    host = host_from(
        "p5", {"nvidia-smi": A30_ERR, "lspci-nvidia": "generic_lspci_p5_8xh100_nvswitch.txt"}
    )
    healthy = host.model_copy(deep=True)
    host.gpu.gpus = host.gpu.gpus[:7]

    missing = _found({"p5": host}, "gpus_missing")

    assert healthy.gpu.pci_gpus == 8 and not _found({"p5": healthy}, "gpus_missing")
    assert "shows 7 GPU(s) on p5 but the PCI bus holds 8" in missing[0].message


def test_a_healthy_host_passes_the_gpu_preflight() -> None:
    host = host_from("h200", {"nvidia-smi": "h200_nvidia-smi.txt"})

    found = preflight_findings({"h200": host})["gpu"]

    assert [f.severity for f in found] == ["ok"]


def test_mig_on_names_its_instances_and_how_to_turn_it_off() -> None:
    host = host_from("a100", {"nvidia-smi-list": "generic_nvidia-smi_L_a100_mig_4_instances.txt"})

    mig = _found({"a100": host}, "mig_enabled")

    assert mig[0].message == (
        "MIG is on for GPU 0 on a100 (4 instances: 3g.40gb, 2g.20gb, 1g.10gb, 1g.10gb): an "
        "engine sees the instances, never the whole GPU"
    )
    assert "sudo nvidia-smi -i 0 -mig 0" in (mig[0].fix or "")


def test_fewer_gpus_than_an_earlier_probe_saw() -> None:
    world = WorldModel()
    world.update("a30", host_from("a30", {"nvidia-smi": A30_ERR}))
    later = host_from("a30", {"nvidia-smi": A30_ERR})
    later.gpu.gpus = later.gpu.gpus[:6]

    world.update("a30", later)
    missing = _found(world.hosts, "gpus_missing")

    assert world.hosts["a30"].gpu.gpus_before == 8
    assert "shows 6 GPU(s) on a30, 8 before" in missing[0].message


def test_a_kernel_log_read_the_wall_refused_is_no_finding_and_says_it_could_not_read() -> None:
    """`dmesg | grep 'NVRM: Xid' | tail` inside the wall: dmesg is refused (dmesg_restrict=1,
    no CAP_SYSLOG), grep finds nothing, the pipeline exits 0: that is not "no Xid errors"."""
    refused = "dmesg: read kernel buffer failed: Operation not permitted"
    sections = {"xid": Section("xid", refused, 0, walled=True)}
    host = facts_from_sections("a30", sections, WHEN)
    assert _found({"a30": host}, "gpu_xid_errors") == []
    assert f"xid could not read inside the wall: {refused}" in (host.gpu.problem or "")
    read = host_from("a30", {"xid": XID_119})  # the same read, allowed: the finding is there
    assert _found({"a30": read}, "gpu_xid_errors")
