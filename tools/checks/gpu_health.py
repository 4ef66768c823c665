"""GPU faults: a GPU the driver lost or cannot reach, GPUs missing from what the bus holds, MIG
mode on, and the driver's Xid errors in the kernel log.

Each is read from real output (tests/fixtures/recon/): `ERR!` cells after Xid 119 (8×A30),
`Unable to determine the device handle for GPU1: …: Unknown Error` (4×RTX PRO 6000), `lspci`
of an 8×H100 host, `NVRM: Xid (PCI:…): 119, …` lines. An engine cannot use a lost GPU, and a
tensor-parallel engine over all GPUs fails to start on one, so these block the host until a
person resets or services it; MIG on hides the whole GPU behind its instances.
"""

from __future__ import annotations

from collections.abc import Mapping

from tools.world.facts import HostFacts
from tools.world.findings import Finding

CHECK = "gpu"
RESET = (
    "reset it when nothing uses it (`sudo nvidia-smi -r -i {index}`), or reboot the host; "
    "if it comes back, the GPU needs service"
)
# NVIDIA's Xid catalogue: what the common codes mean for a deployment
XID_MEANING = {
    48: "double-bit ECC error",
    63: "ECC page retirement or row remapping",
    64: "ECC page retirement or row remapping failure",
    74: "NVLink error",
    79: "GPU has fallen off the bus",
    92: "high single-bit ECC error rate",
    94: "contained ECC error",
    95: "uncontained ECC error",
    119: "GSP RPC timeout",
    120: "GSP error",
}


# Faults that do not make a host useless to a look (recon warns) but stop an engine started on it:
# MIG hides the whole GPU behind its instances; a GPU with Xid errors since boot may fail or
# hang the engine. A plan that uses the host stops at them with their fix.
STOPS_A_PLAN = frozenset({"mig_enabled", "gpu_xid_errors"})


def for_a_plan(findings: list[Finding]) -> list[Finding]:
    """The findings as a plan on these hosts sees them: those in STOPS_A_PLAN are blockers."""
    return [
        f.model_copy(update={"severity": "blocker"}) if f.kind in STOPS_A_PLAN else f
        for f in findings
    ]


def gpu_health_findings(hosts: Mapping[str, HostFacts]) -> list[Finding]:
    findings: list[Finding] = []
    for name, facts in hosts.items():
        findings += _lost(name, facts) + _unreachable(name, facts) + _missing(name, facts)
        findings += _mig(name, facts) + _xid(name, facts)
    return findings


def _evidence(facts: HostFacts, detail: str) -> list[str]:
    return [f"{s.host}: {s.command}: {detail}" for s in facts.gpu.sources[:1]]


def _lost(name: str, facts: HostFacts) -> list[Finding]:
    return [
        Finding(
            severity="blocker",
            check=CHECK,
            kind="gpu_lost",
            hosts=[name],
            message=f"GPU {gpu.index} ({gpu.bus_id or 'bus ?'}) on {name} reads ERR! in "
            "nvidia-smi: the driver lost it (an Xid error); no engine can use it",
            fix=RESET.format(index=gpu.index),
            evidence=_evidence(facts, f"GPU {gpu.index} row: ERR!"),
        )
        for gpu in facts.gpu.gpus
        if gpu.faulted
    ]


def _unreachable(name: str, facts: HostFacts) -> list[Finding]:
    return [
        Finding(
            severity="blocker",
            check=CHECK,
            kind="gpu_unreachable",
            hosts=[name],
            message=f"the driver cannot reach a GPU on {name}: {said}",
            fix="reboot the host; if the GPU stays unreachable, reseat or service it "
            "(nvidia-smi lists only the GPUs it can reach)",
            needs_person=True,
            evidence=_evidence(facts, said),
        )
        for said in facts.gpu.unreachable
    ]


def _missing(name: str, facts: HostFacts) -> list[Finding]:
    seen, on_bus, before = len(facts.gpu.gpus), facts.gpu.pci_gpus, facts.gpu.gpus_before
    if facts.gpu.unreachable:
        return []  # the driver's line already says which one is missing
    if before is not None and before > seen and (on_bus is None or on_bus <= seen):
        return [
            Finding(
                severity="blocker",
                check=CHECK,
                kind="gpus_missing",
                hosts=[name],
                message=f"nvidia-smi shows {seen} GPU(s) on {name}, {before} before: "
                f"{before - seen} gone since the last probe",
                fix="check the kernel log for NVRM errors (Xid 79: fallen off the bus) and "
                "reboot; a GPU that stays missing needs service",
                needs_person=True,
                evidence=[f"{name}: nvidia-smi: {seen} GPU(s) now, {before} at an earlier probe"],
            )
        ]
    if on_bus is None or seen >= on_bus:
        return []
    return [
        Finding(
            severity="blocker",
            check=CHECK,
            kind="gpus_missing",
            hosts=[name],
            message=f"nvidia-smi shows {seen} GPU(s) on {name} but the PCI bus holds {on_bus}: "
            f"{on_bus - seen} the driver does not use",
            fix="check the kernel log for NVRM errors and reboot; a GPU that stays missing "
            "needs service",
            needs_person=True,
            evidence=[f"{name}: lspci -d 10de:: {on_bus} 3D/VGA controllers"],
        )
    ]


def _mig(name: str, facts: HostFacts) -> list[Finding]:
    return [
        Finding(
            severity="warning",
            check=CHECK,
            kind="mig_enabled",
            hosts=[name],
            message=f"MIG is on for GPU {gpu.index} on {name}"
            + (
                f" ({len(gpu.mig_instances)} instances: {', '.join(gpu.mig_instances)})"
                if gpu.mig_instances
                else " (no instances listed)"
            )
            + ": an engine sees the instances, never the whole GPU",
            fix=f"turn MIG off when nothing uses the instances (`sudo nvidia-smi -i {gpu.index} "
            "-mig 0`, then reset the GPU), or size the model for one instance",
            evidence=_evidence(facts, f"GPU {gpu.index} MIG {gpu.mig_mode or 'instances'}"),
        )
        for gpu in facts.gpu.gpus
        if gpu.mig_mode == "Enabled" or gpu.mig_instances
    ]


def _xid(name: str, facts: HostFacts) -> list[Finding]:
    events = facts.gpu.xid_events
    if not events:
        return []
    codes = sorted({int(e.split()[1]) for e in events if e.split()[1].isdigit()})
    meaning = ", ".join(f"{c} ({XID_MEANING[c]})" if c in XID_MEANING else str(c) for c in codes)
    return [
        Finding(
            severity="warning",
            check=CHECK,
            kind="gpu_xid_errors",
            hosts=[name],
            message=f"the kernel log on {name} shows {len(events)} Xid error(s) of the GPU "
            f"driver: Xid {meaning}; last: {events[-1]}",
            fix="an engine started now may fail or hang: reset the GPU named or reboot before "
            "serving; Xid 79 or ECC errors that recur need service",
            evidence=[f"{name}: dmesg | grep 'NVRM: Xid': {e}" for e in events[-3:]],
        )
    ]
