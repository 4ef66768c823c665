"""The probe's output, assembled from real Spark captures, read back into facts."""

from __future__ import annotations

import json
from datetime import UTC, datetime

from tests.support.captures import capture
from tools.recon.probe import build_probe_script, split_sections
from tools.recon.probe_parse import facts_from_sections
from tools.recon.sections import SECTIONS

NOW = datetime(2026, 12, 2, 12, 0, tzinfo=UTC)


def probe_output(sections: dict[str, tuple[str, int]]) -> str:
    """What the probe script prints: start marker, output, end marker with the exit status."""
    parts = []
    for name, (output, status) in sections.items():
        parts += [
            f"@@scout:section {name}@@",
            output.rstrip("\n"),
            f"@@scout:status {name} {status}@@",
        ]
    return "\n".join(parts) + "\n"


SPARK = {
    "hostname": ("hutch\n", 0),
    "uname": (capture("spark_uname_a.txt"), 0),
    "os-release": (capture("spark_os-release.txt"), 0),
    "dgx-release": (capture("spark_dgx-release.txt"), 0),
    "lscpu": (capture("spark_lscpu_head25.txt"), 0),
    "meminfo": ("cat: /proc/meminfo: Permission denied\n", 1),
    "free": (capture("spark_free_h.txt"), 0),
    "nvidia-smi": (capture("spark_nvidia-smi_580.95.05.txt"), 0),
    "nvidia-smi-list": (capture("spark_nvidia-smi_L.txt"), 0),
    "nvcc": ("sh: 1: nvcc: not found\n", 127),
    "cuda-nvcc": ("present\n", 0),
    "docker-version": ("sh: 1: docker: not found\n", 127),
    "groups": ("aurora adm sudo\n", 0),
    "ibdev2netdev": (capture("spark_ibdev2netdev_p1_up.txt"), 0),
    "rdma-link": (capture("spark_rdma_link_show.txt"), 0),
    "ray": (capture("spark_ray_status_2nodes.txt"), 0),
}


def spark_facts():
    sections = split_sections(probe_output(SPARK))
    return facts_from_sections("spark-a", sections, NOW)


def test_script_has_every_section_once_and_no_file_redirection() -> None:
    script = build_probe_script()
    for name, _ in SECTIONS:
        assert script.count(f"@@scout:section {name}@@") == 1
    assert ">/" not in script and "> /" not in script and "cd " not in script


def test_sections_split_with_exit_status_and_a_cut_off_tail() -> None:
    text = probe_output({"hostname": ("spark-7d19", 0), "nvcc": ("nvcc: not found", 127)})
    text += "@@scout:section nvidia-smi@@\n+-----\n"
    sections = split_sections(text)
    assert sections["hostname"].output == "spark-7d19"
    assert sections["nvcc"].exit_status == 127 and sections["nvcc"].missing
    assert sections["nvidia-smi"].exit_status is None
    assert "cut off" in sections["nvidia-smi"].problem()


def test_spark_identity_gpu_and_os_from_captures() -> None:
    facts = spark_facts()
    assert (facts.identity.hostname, facts.identity.arch) == ("hutch", "aarch64")
    assert facts.identity.kernel == "6.17.0-1014-nvidia"
    assert facts.gpu.driver_version == "580.95.05" and facts.gpu.cuda_version == "13.0"
    assert [g.name for g in facts.gpu.gpus] == ["NVIDIA GB10"]
    assert facts.gpu.gpus[0].uuid.startswith("GPU-")
    assert facts.os.dgx_name == "DGX Spark" and facts.os.dgx_swbuild_version
    assert facts.cpu.cpu_count == 20
    assert facts.identity.sources[0].command == "hostname"
    assert facts.identity.sources[0].collected_at == NOW


def test_unified_memory_budget_falls_back_to_free_when_meminfo_is_refused() -> None:
    memory = spark_facts().memory
    assert memory.unified_memory is True
    assert 119 * 1024**3 <= memory.total_bytes <= 122 * 1024**3
    assert memory.budget_bytes == memory.available_bytes == 118 * 1024**3
    assert "Permission denied" in memory.problem


def test_missing_tools_make_facts_unknown_not_errors() -> None:
    facts = spark_facts()
    assert facts.toolkit.nvcc_on_path is False and facts.toolkit.cuda_nvcc_present is True
    assert facts.docker.installed is False and facts.docker.usable is False
    assert "docker: not found" in facts.docker.problem
    assert facts.python.version is None and "did not run" in facts.python.problem


def test_rdma_ports_and_ray_from_captures() -> None:
    facts = spark_facts()
    up = sorted(p.device for p in facts.rdma.ports if p.up)
    assert up == ["roceP2p1s0f1", "rocep1s0f1"]
    assert facts.services.ray_running is True and facts.services.ray_nodes == 2


def test_garbled_section_is_reported_with_what_it_said() -> None:
    sections = split_sections(probe_output({"nvidia-smi": ("Failed to initialize NVML", 9)}))
    facts = facts_from_sections("x", sections, NOW)
    assert facts.gpu.gpus == []
    assert "Failed to initialize NVML" in facts.gpu.problem


def test_docker_socket_permission_denied_means_installed_but_unusable() -> None:
    denied = (
        "Client: Docker Engine - Community\n Version:           29.2.1\n"
        "permission denied while trying to connect to the docker API at "
        "unix:///var/run/docker.sock: dial unix /var/run/docker.sock: connect: permission denied\n"
    )
    sections = split_sections(
        probe_output({"docker-version": (denied, 1), "groups": ("aurora adm sudo\n", 0)})
    )
    docker = facts_from_sections("x", sections, NOW).docker
    assert (docker.installed, docker.usable, docker.permission_denied) == (True, False, True)
    assert docker.in_docker_group is False
    assert docker.problem.startswith("permission denied while trying to connect")


QWEN_REV = "84c8c7f23baca074f13879a28a3517bd03ce9a1f"
GPT2_REV = "607a30d783dfa663caf39e06633721c8d4cfcd7e"
HF_MODELS = (
    f"model models--Qwen--Qwen3.5-122B-A10B-FP8 119000000000 main={QWEN_REV} snapshot=yes "
    "incomplete=0\n"
    f"model models--gpt2 548118077 main={GPT2_REV} snapshot=yes incomplete=2\n"
)


def hf_cache_facts(output: str, status: int):
    sections = split_sections(probe_output({"hf-models": (output, status)}))
    return facts_from_sections("spark-a", sections, NOW).hf_cache


def test_cached_models_by_hub_id_with_sizes_revisions_and_provenance() -> None:
    cache = hf_cache_facts(HF_MODELS, 0)
    assert cache.models == {"Qwen/Qwen3.5-122B-A10B-FP8": 119_000_000_000, "gpt2": 548118077}
    qwen, gpt2 = cache.copies["Qwen/Qwen3.5-122B-A10B-FP8"], cache.copies["gpt2"]
    assert (qwen.revision, qwen.snapshot, qwen.incomplete_blobs) == (QWEN_REV, True, 0)
    assert (gpt2.revision, gpt2.incomplete_blobs) == (GPT2_REV, 2)
    assert cache.problem is None
    assert cache.sources[0].command.startswith('for d in "$HOME"/.cache/huggingface/hub/models--*')
    assert cache.sources[0].exit_status == 0


def test_missing_du_leaves_the_sizes_unknown_not_the_listing() -> None:
    said = (
        "bash: line 1: du: command not found\n"
        "model models--Qwen--Qwen3.5-122B-A10B-FP8 - main=- snapshot=no incomplete=1\n"
    )
    cache = hf_cache_facts(said, 0)
    assert cache.models == {"Qwen/Qwen3.5-122B-A10B-FP8": None}
    copy = cache.copies["Qwen/Qwen3.5-122B-A10B-FP8"]
    assert (copy.revision, copy.snapshot, copy.incomplete_blobs) == (None, False, 1)
    assert "no size for Qwen/Qwen3.5-122B-A10B-FP8" in cache.problem
    assert "du: command not found" in cache.problem


def test_a_line_in_another_shape_leaves_the_listing_unknown_and_quotes_it() -> None:
    cache = hf_cache_facts("model models--gpt2 548118077 main=v1.0 snapshot=yes incomplete=0\n", 0)
    assert cache.models is None and cache.copies == {}
    assert "main=v1.0" in cache.problem


def test_empty_cache_is_no_models_and_an_old_probe_is_unknown() -> None:
    assert hf_cache_facts("", 0).models == {}
    assert spark_facts().hf_cache.models is None
    assert "did not run" in spark_facts().hf_cache.problem


def _nic(name: str, flags: list[str], state: str) -> str:
    return (
        f'{{"ifname":"{name}","flags":{json.dumps(flags)},"mtu":1500,"operstate":"{state}",'
        '"addr_info":[]}'
    )


def test_interfaces_carry_the_carrier_only_when_administratively_up() -> None:
    # `ip -j addr` objects in iproute2's layout, one per carrier case.
    listing = (
        "["
        + ",".join(
            [
                _nic("enp1s0f0np0", ["NO-CARRIER", "BROADCAST", "MULTICAST", "UP"], "DOWN"),
                _nic("enp1s0f1np1", ["BROADCAST", "MULTICAST"], "DOWN"),
                _nic("enP7s7", ["BROADCAST", "MULTICAST", "UP", "LOWER_UP"], "UP"),
            ]
        )
        + "]"
    )
    sections = split_sections(probe_output({"ip-addr": (listing, 0)}))
    nics = {n.name: n for n in facts_from_sections("x", sections, NOW).network.interfaces}
    assert nics["enp1s0f0np0"].carrier is False
    assert nics["enp1s0f1np1"].carrier is None
    assert nics["enP7s7"].carrier is True
