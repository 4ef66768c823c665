"""A discrete-GPU host as a real H200 VM showed it (tests/fixtures/recon/h200_*.txt): the GPU and
its memory, the process holding 41.6 GiB, and what freeing it makes possible; a host without a
GPU has no GPU memory to offer."""

from __future__ import annotations

from agent.world.render import host_block
from tests.support.captured_host import WHEN, host_from, section
from tests.support.captures import capture
from tools.checks import GB, compute_findings
from tools.checks.budget import NodeBudget
from tools.checks.fabric import PairLink
from tools.checks.layout import LayoutRequest, choose_layout
from tools.deploy.plan.fixes import by_hand_step
from tools.recon.parsers import parse_nvidia_smi_table, parse_nvidia_smi_topo
from tools.recon.parsers.nvidia_smi_q import parse_nvidia_smi_q
from tools.recon.probe_parse import facts_from_sections
from tools.recon.sections import Section
from tools.world.facts import GpuProcessFact

H200 = {
    "nvidia-smi": "h200_nvidia-smi.txt",
    "nvidia-smi-query": "h200_nvidia-smi_gpu_csv.txt",
    "meminfo": "h200_meminfo.txt",
    "free": "h200_free.txt",
}
NO_NVIDIA_SMI = {"nvidia-smi": "bash: line 1: nvidia-smi: command not found"}


def _kinds(findings, kind: str) -> list[str]:
    return [f.text for f in findings if f.kind == kind]


def test_the_process_holding_gpu_memory_is_named_with_what_freeing_it_allows() -> None:
    h200 = host_from("h200", H200)

    findings = compute_findings({"h200": h200}, model_size_bytes=119 * GB)

    # 119 GB + its KV headroom is ~131 GB, more than 0.8 × 151 GB: the one fit rule says no,
    # where the old wording said "stopping it would let a ~119 GB model fit"
    assert _kinds(findings, "gpu_process_holds_memory") == [
        "python3 (pid 498) holds ~44 GB of GPU memory on h200; even with it stopped a ~119 GB "
        "model would not fit here (~151 GB free then); python3 is not a serving engine Scout "
        "knows, so Scout will not stop it: ask whoever runs pid 498 to free the GPU, or choose "
        "another host"
    ]
    assert _kinds(findings, "model_exceeds_cluster") == [
        "a ~119 GB model exceeds the 107 GB available on h200"
    ]


def test_stopping_the_holder_lets_a_model_fit_only_where_the_fit_rule_says_so() -> None:
    findings = compute_findings({"h200": host_from("h200", H200)}, model_size_bytes=100 * GB)

    holder = next(f for f in findings if f.kind == "gpu_process_holds_memory")
    assert "stopping it would let a ~100 GB model fit" in holder.message
    assert [c.state for c in holder.fit] == ["fits_once_stopped"]


def test_without_a_model_the_process_finding_says_what_stopping_it_frees() -> None:
    findings = compute_findings({"h200": host_from("h200", H200)})

    holder = next(f for f in findings if f.kind == "gpu_process_holds_memory")
    assert "stopping it would make ~151 GB available (now ~107 GB)" in holder.message
    assert any("h200_" not in e and "pid 498 python3 41570 MiB" in e for e in holder.evidence)


def test_the_host_table_shows_gpu_memory_used_of_total_where_it_is_not_unified() -> None:
    lines = host_block(host_from("h200", H200))

    assert any("GPU memory 40.6/140.4 GiB used" in line for line in lines), lines


def test_a_host_without_a_gpu_has_no_gpu_memory_for_a_model() -> None:
    cpu_only = host_from("cpu", {"meminfo": "h200_meminfo.txt"}, NO_NVIDIA_SMI)

    findings = compute_findings({"cpu": cpu_only})

    assert cpu_only.memory.budget_bytes is None and cpu_only.memory.gpu_count == 0
    assert not _kinds(findings, "memory_available")
    assert not any("available for a model" in f.message for f in findings)


def test_an_8_gpu_hosts_nvlink_matrix_is_read_into_its_facts() -> None:
    """The rows and processes of an 8-GPU host are read in test_sim_h100_formats and on the
    simulated HGX pair (tests/integration/test_layouts_sim.py); here the real NV18 matrix."""
    topology = parse_nvidia_smi_topo(capture("generic_nvidia-smi_topo_m_8xh100_nv18.txt"))
    node = NodeBudget("hgx", 600 * GB, 650 * GB, gpus=8, gpu_link=topology.detail)

    layout = choose_layout(LayoutRequest(400 * GB), [node], _no_link)

    assert (topology.gpus, topology.interconnect, len(topology.links)) == (8, "nvlink", 28)
    assert (layout.tensor_parallel, layout.pipeline_parallel) == (8, 1)
    assert layout.why_split.endswith("within a node: NV18 between all 8 GPUs")


def test_gpus_linked_only_over_pcie_are_said_to_cost_the_all_reduce() -> None:
    topology = parse_nvidia_smi_topo(capture("generic_nvidia-smi_topo_m_4gpu_pcie_only.txt"))
    node = NodeBudget("box", 300 * GB, 320 * GB, gpus=4, gpu_link=topology.detail,
                      pcie_only=topology.interconnect == "pcie")  # fmt: skip

    layout = choose_layout(LayoutRequest(100 * GB), [node], _no_link)

    assert topology.interconnect == "pcie" and layout.tensor_parallel == 4
    assert "PCIe only between its 4 GPUs (PHB, SYS)" in layout.why_split
    assert "all-reduce crosses PCIe" in layout.why_split


def test_one_gpu_has_no_interconnect_to_report() -> None:
    h200 = host_from("h200", {**H200, "nvidia-smi-topo": "h200_nvidia-smi_topo.txt"})

    assert h200.gpu.interconnect is None and "topo" not in (h200.gpu.problem or "")


def _no_link(_a: str, _b: str) -> PairLink:
    raise AssertionError("a one-node layout asks about no link")


def _holding(facts, *processes: tuple[int, str, int]):
    """The H200 host with these (pid, name, MiB) on its GPU instead of its own."""
    held = facts.model_copy(deep=True)
    held.gpu.processes = [
        GpuProcessFact(pid=pid, name=name, memory_bytes=mib * 1024**2)
        for pid, name, mib in processes
    ]
    return held


def test_the_desktop_and_unknown_processes_are_named_never_killed() -> None:
    """The graphics processes of a real TITAN V workstation (`nvidia-smi -q`,
    generic_nvidia-smi_q_titanv_560.35.03.txt) on a discrete host: named, no `kill`."""
    desktop = parse_nvidia_smi_q(capture("generic_nvidia-smi_q_titanv_560.35.03.txt"))
    on_gpu = [(p.pid, p.name, p.memory_used_mib or 0) for p in desktop.gpus[0].processes]
    assert [name for _pid, name, _mib in on_gpu] == [
        "/usr/lib/xorg/Xorg", "/usr/bin/gnome-shell", "/opt/test"
    ]  # fmt: skip
    host = _holding(host_from("h200", H200), *on_gpu)

    findings = [f for f in compute_findings({"h200": host}) if f.kind == "gpu_process_holds_memory"]

    assert [f.message.split(" (pid")[0] for f in findings] == [name for _p, name, _m in on_gpu]
    assert all(f.fix and "kill" not in f.fix and "will not stop it" in f.fix for f in findings)
    assert not any("kill" in " ".join(by_hand_step(f).actions) for f in findings)


def test_an_engine_holding_the_gpu_may_be_stopped() -> None:
    """vLLM's engine titles its process `VLLM::EngineCore` (spark_nvidia-smi_580.126.09_
    enginecore_memory_cut.txt); on a discrete host the plan may propose stopping it."""
    table = parse_nvidia_smi_table(capture("spark_nvidia-smi_580.126.09_enginecore_memory_cut.txt"))
    engine = next(p for p in table.processes if p.name.startswith("VLLM::"))
    host = _holding(host_from("h200", H200), (engine.pid, engine.name, 40000))

    holder = next(
        f for f in compute_findings({"h200": host}) if f.kind == "gpu_process_holds_memory"
    )

    assert (
        holder.fix == f"if nothing needs it, stop it (`kill {engine.pid}`, or stop its container)"
    )


DRIVER_NOT_LOADED = (
    "NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver. Make sure "
    "that the latest NVIDIA driver is installed and running."
)


def test_a_host_without_a_usable_gpu_stops_a_model_asked_for_with_the_reason() -> None:
    """nvidia-smi absent (exit 127), no device seen (exit 6), the driver not loaded (exit 9):
    each is said by the tool and stops a model asked for on that host, with its reason; without
    a model nothing is asked of the host, and nothing is said."""
    said = {
        "nvidia-smi is not installed": Section("nvidia-smi", NO_NVIDIA_SMI["nvidia-smi"], 127),
        "the driver is loaded but sees no GPU": Section("nvidia-smi", "No devices were found\n", 6),
        "the NVIDIA driver is not loaded": Section("nvidia-smi", DRIVER_NOT_LOADED + "\n", 9),
    }
    for reason, nvidia_smi in said.items():
        sections = {"meminfo": section("meminfo", "h200_meminfo.txt"), "nvidia-smi": nvidia_smi}
        host = facts_from_sections("cpu", sections, WHEN)

        absent = [f for f in compute_findings({"cpu": host}, 30 * GB) if f.kind == "no_usable_gpu"]

        assert len(absent) == 1 and absent[0].severity == "blocker", reason
        assert reason in absent[0].message and "a ~30 GB model" in absent[0].message, absent
        assert not [f for f in compute_findings({"cpu": host}) if f.kind == "no_usable_gpu"]
