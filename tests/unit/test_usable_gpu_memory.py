"""Usable memory, not present memory: what one engine can allocate is what every budget, table
and finding counts. A GPU split by MIG offers its instances, each a device an engine uses alone
(tests/fixtures/recon/generic_nvidia-smi_L_a100_mig_4_instances.txt, a real A100 80GB in four
instances); a discrete host's table shows GPU memory, its RAM named as RAM (h200_*.txt)."""

from __future__ import annotations

import io

from rich.console import Console

from agent.world.model import WorldModel
from agent.world.tables import print_tables
from tests.support.captured_host import host_from
from tools.checks import GB, compute_findings

MIG_A100 = {"nvidia-smi-list": "generic_nvidia-smi_L_a100_mig_4_instances.txt"}
H200 = {
    "nvidia-smi": "h200_nvidia-smi.txt",
    "nvidia-smi-query": "h200_nvidia-smi_gpu_csv.txt",
    "meminfo": "h200_meminfo.txt",
}


def _available(findings) -> list[str]:
    return [f.message for f in findings if f.kind == "memory_available"]


def test_a_gpu_split_by_mig_offers_its_largest_instance_not_the_hosts_ram() -> None:
    host = host_from("a100", {**MIG_A100, "meminfo": "h200_meminfo.txt"})

    assert host.gpu.gpus[0].mig_instances[0] == "3g.40gb"
    assert host.memory.budget_bytes == 40 * 10**9
    assert _available(compute_findings({"a100": host})) == [
        "a100: 40 GB available for a model (GPU memory)"
    ]
    fit = [f.message for f in compute_findings({"a100": host}, 60 * GB) if f.severity == "blocker"]
    assert any("60 GB" in message for message in fit), fit


def test_the_people_table_shows_the_gpu_memory_a_model_can_use() -> None:
    world = WorldModel()
    world.update("h200", host_from("h200", H200))
    world.update("a100", host_from("a100", {**MIG_A100, "meminfo": "h200_meminfo.txt"}))
    out = io.StringIO()

    print_tables(world, Console(file=out, width=220, color_system=None))

    text = out.getvalue()
    assert "GPU 37.3 GiB free of 37.3 GiB" in text  # the A100's 3g.40gb instance
    assert "GPU 99.8 GiB free of 140.4 GiB · host RAM 125.8 GiB" in text, text
