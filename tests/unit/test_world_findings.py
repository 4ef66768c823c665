"""Findings computed across hosts from crafted facts: what a user would read."""

from __future__ import annotations

from tests.support.sparks import VLLM_NODE, one_port_spark
from tools.checks import GB, compute_findings
from tools.world.facts import DockerFacts, GpuProcessFact


def messages(findings, kind: str) -> list[str]:
    return [f.text for f in findings if f.kind == kind]


def test_container_blocks_a_model_that_must_split_across_both_nodes() -> None:
    hosts = {
        "spark-a": one_port_spark("spark-a", available_gb=15, containers=[VLLM_NODE]),
        "spark-b": one_port_spark("spark-b", available_gb=107, address="192.168.100.11/24"),
    }
    findings = compute_findings(hosts, model_size_bytes=119 * GB)
    assert findings[0].severity == "blocker"
    assert messages(findings, "model_does_not_fit") == [
        "a ~119 GB model cannot start while vllm_node holds ~98 GB on spark-a: 15 GB available "
        "(needs ~60 GB per node split over 2 nodes)"
    ]
    assert messages(findings, "container_holds_memory") == [
        "container vllm_node holds ~98 GB on spark-a"
    ]
    assert messages(findings, "model_needs_all_nodes")


def test_without_a_model_size_each_host_reports_its_available_memory() -> None:
    findings = compute_findings({"spark-a": one_port_spark("spark-a", available_gb=15)})
    assert messages(findings, "memory_available") == [
        "spark-a: 15 GB available for a model (unified memory)"
    ]
    assert not messages(findings, "model_does_not_fit")


def test_model_too_big_for_the_whole_cluster() -> None:
    hosts = {
        "a": one_port_spark("a", available_gb=50),
        "b": one_port_spark("b", available_gb=50, address="192.168.100.11/24"),
    }
    findings = compute_findings(hosts, model_size_bytes=234 * GB)
    assert messages(findings, "model_exceeds_cluster") == [
        "a ~234 GB model exceeds the 100 GB available on all 2 hosts together"
    ]


def test_model_too_big_for_a_single_host_names_it() -> None:
    findings = compute_findings(
        {"a": one_port_spark("a", available_gb=50)}, model_size_bytes=234 * GB
    )
    assert messages(findings, "model_exceeds_cluster") == [
        "a ~234 GB model exceeds the 50 GB available on a"
    ]


def test_roce_link_down_is_a_blocker_for_a_pair_with_port_evidence() -> None:
    hosts = {
        "spark-a": one_port_spark("spark-a"),
        "spark-b": one_port_spark("spark-b", link_up=False, address=None),
    }
    down = [f for f in compute_findings(hosts) if f.kind == "roce_link_down"]
    assert [(f.severity, f.hosts) for f in down] == [("blocker", ["spark-b"])]
    assert down[0].evidence == ["rocep1s0f1/1 DOWN DISABLED netdev enp1s0f1np1"]


def test_one_cable_link_local_is_a_fabric_address_but_both_ends_must_share_it() -> None:
    """NVIDIA's guide allows link-local on one cable (docs/sources.md §2.1): it is accepted, and
    the finding is that the two ends share no subnet, naming each end's network."""
    hosts = {
        "spark-a": one_port_spark("spark-a", address="169.254.35.62/16"),
        "spark-b": one_port_spark("spark-b", address="192.168.200.11/24"),
    }
    findings = compute_findings(hosts)
    [shared] = [f for f in findings if f.kind == "no_shared_fabric_subnet"]
    assert shared.evidence == ["spark-a: 169.254.0.0/16", "spark-b: 192.168.200.0/24"]
    assert not messages(findings, "link_local_two_cables")
    both = {
        h: one_port_spark(h, address=a)
        for h, a in (("a", "169.254.1.2/16"), ("b", "169.254.3.4/16"))
    }
    assert [f.kind for f in compute_findings(both) if f.check == "fabric"] == []


def test_shared_subnet_gives_no_fabric_finding() -> None:
    hosts = {"a": one_port_spark("a"), "b": one_port_spark("b", address="192.168.100.11/24")}
    assert not messages(compute_findings(hosts), "no_shared_fabric_subnet")


def test_driver_and_ota_skew_between_nodes() -> None:
    hosts = {
        "spark-a": one_port_spark("spark-a"),
        "spark-b": one_port_spark(
            "spark-b", driver="580.126.09", ota="7.5.0", address="192.168.100.11/24"
        ),
    }
    skew = messages(compute_findings(hosts), "version_skew")
    assert (
        "driver differs between hosts: spark-a 580.95.05, spark-b 580.126.09; "
        "align them before clustering" in skew
    )
    assert any(m.startswith("DGX OTA differs") for m in skew)


def test_slow_link_nvcc_and_docker_permission() -> None:
    host = one_port_spark("spark-a", speed_mbps=100_000)
    host.docker = DockerFacts(
        installed=True, usable=False, permission_denied=True, user_groups=["aurora"]
    )
    findings = compute_findings({"spark-a": host})
    assert messages(findings, "link_speed_low") == [
        "spark-a: fabric link below 200G: enp1s0f1np1 100G"
    ]
    assert "nvcc is not on PATH on spark-a" in messages(findings, "nvcc_off_path")[0]
    docker = [f for f in findings if f.kind == "docker_permission_denied"]
    assert docker[0].severity == "blocker" and "add the user to the docker group" in docker[0].text


def test_docker_not_installed() -> None:
    host = one_port_spark("spark-a")
    host.docker = DockerFacts(installed=False, usable=False, problem="docker exited 127: not found")
    assert messages(compute_findings({"spark-a": host}), "docker_missing")


def test_docker_daemon_not_running() -> None:
    host = one_port_spark("spark-a")
    host.docker = DockerFacts(
        installed=True,
        usable=False,
        problem="Cannot connect to the Docker daemon at unix:///var/run/docker.sock.",
    )
    (finding,) = [f for f in compute_findings({"spark-a": host}) if f.kind == "docker_unusable"]
    assert finding.severity == "blocker" and "cannot reach its daemon" in finding.message


def test_page_cache_that_vllm_would_count_as_used() -> None:
    host = one_port_spark("spark-a", available_gb=116)
    host.memory.free_bytes = 19 * GB
    (finding,) = [f for f in compute_findings({"spark-a": host}) if f.kind == "page_cache_inflated"]
    assert finding.message.startswith(
        "spark-a: page cache holds ~97 GB (MemFree 19 GB, MemAvailable 116 GB)"
    )
    assert "drop_caches" in finding.message


def test_an_engine_with_cut_memory_still_holds_memory() -> None:
    facts = one_port_spark("spark-a")
    facts.gpu.processes = [
        GpuProcessFact(pid=3048280, name="VLLM::EngineCore", memory_cut=True),
        GpuProcessFact(pid=2804, name="/usr/lib/xorg/Xorg", memory_bytes=179 * 1024**2),
    ]
    assert messages(compute_findings({"spark-a": facts}), "gpu_process_holds_memory") == [
        "VLLM::EngineCore (pid 3048280) holds GPU memory on spark-a; nvidia-smi cut the amount, "
        "so it is unknown but large (100000 MiB or more)"
    ]
