"""Findings computed across hosts from crafted facts: what a user would read."""

from __future__ import annotations

from datetime import UTC, datetime

from tools.checks import GB, compute_findings
from tools.recon.facts import (
    Container,
    DockerFacts,
    Gpu,
    GpuFacts,
    HostFacts,
    IdentityFacts,
    Interface,
    MemoryFacts,
    NetworkFacts,
    OsFacts,
    RdmaFacts,
    RdmaPort,
    ToolkitFacts,
)

GIB = 1024**3
NOW = datetime(2026, 12, 2, 12, 0, tzinfo=UTC)


def spark(
    host: str,
    *,
    available_gb: float = 110,
    containers: list[Container] | None = None,
    link_up: bool = True,
    address: str | None = "192.168.100.10/24",
    speed_mbps: int = 200_000,
    driver: str = "580.95.05",
    ota: str = "7.3.1",
) -> HostFacts:
    """A DGX Spark as recon sees it; each keyword bends one fact."""
    return HostFacts(
        host=host,
        collected_at=NOW,
        identity=IdentityFacts(hostname=f"{host}-x", arch="aarch64", kernel="6.17.0-1014-nvidia"),
        os=OsFacts(
            pretty_name="Ubuntu 24.04.3 LTS", dgx_swbuild_version="7.2.3", dgx_ota_version=ota
        ),
        memory=MemoryFacts(
            total_bytes=round(121.7 * GIB),
            available_bytes=round(available_gb * GB),
            unified_memory=True,
        ),
        gpu=GpuFacts(
            driver_version=driver,
            cuda_version="13.0",
            gpus=[Gpu(index=0, name="NVIDIA GB10", memory_supported=False)],
        ),
        toolkit=ToolkitFacts(nvcc_on_path=False, cuda_nvcc_present=True),
        docker=DockerFacts(installed=True, usable=True, containers=containers or []),
        rdma=RdmaFacts(
            ports=[
                RdmaPort(
                    device="rocep1s0f1",
                    port=1,
                    state="ACTIVE" if link_up else "DOWN",
                    physical_state="LINK_UP" if link_up else "DISABLED",
                    netdev="enp1s0f1np1",
                    up=link_up,
                )
            ]
        ),
        network=NetworkFacts(
            interfaces=[
                Interface(
                    name="enp1s0f1np1",
                    state="UP" if link_up else "DOWN",
                    addresses=[address] if address else [],
                    speed_mbps=speed_mbps if link_up else None,
                    fabric=True,
                    link_local_only=bool(address and address.startswith("169.254.")),
                )
            ]
        ),
    )


VLLM = Container(
    name="vllm_node",
    image="vllm-node",
    state="running",
    status="Up 7 weeks",
    memory_bytes=98 * GB,
    memory_source="docker stats",
)


def messages(findings, kind: str) -> list[str]:
    return [f.text for f in findings if f.kind == kind]


def test_container_blocks_a_model_that_must_split_across_both_nodes() -> None:
    hosts = {
        "spark-a": spark("spark-a", available_gb=15, containers=[VLLM]),
        "spark-b": spark("spark-b", available_gb=107, address="192.168.100.11/24"),
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
    findings = compute_findings({"spark-a": spark("spark-a", available_gb=15)})
    assert messages(findings, "memory_available") == [
        "spark-a: 15 GB available for a model (unified memory)"
    ]
    assert not messages(findings, "model_does_not_fit")


def test_model_too_big_for_the_whole_cluster() -> None:
    hosts = {
        "a": spark("a", available_gb=50),
        "b": spark("b", available_gb=50, address="192.168.100.11/24"),
    }
    findings = compute_findings(hosts, model_size_bytes=234 * GB)
    assert messages(findings, "model_exceeds_cluster") == [
        "a ~234 GB model exceeds the 100 GB available on all 2 hosts together"
    ]


def test_roce_link_down_is_a_blocker_for_a_pair_with_port_evidence() -> None:
    hosts = {"spark-a": spark("spark-a"), "spark-b": spark("spark-b", link_up=False, address=None)}
    down = [f for f in compute_findings(hosts) if f.kind == "roce_link_down"]
    assert [(f.severity, f.hosts) for f in down] == [("blocker", ["spark-b"])]
    assert down[0].evidence == ["rocep1s0f1/1 DOWN DISABLED netdev enp1s0f1np1"]


def test_no_shared_fabric_subnet_and_link_local_only() -> None:
    hosts = {
        "spark-a": spark("spark-a", address="169.254.35.62/16"),
        "spark-b": spark("spark-b", address="192.168.200.11/24"),
    }
    findings = compute_findings(hosts)
    assert messages(findings, "no_shared_fabric_subnet")
    assert messages(findings, "link_local_fabric") == [
        "spark-a: fabric interface(s) enp1s0f1np1 have only link-local addresses; give each a "
        "static address in a shared subnet"
    ]


def test_shared_subnet_gives_no_fabric_finding() -> None:
    hosts = {"a": spark("a"), "b": spark("b", address="192.168.100.11/24")}
    assert not messages(compute_findings(hosts), "no_shared_fabric_subnet")


def test_driver_and_ota_skew_between_nodes() -> None:
    hosts = {
        "spark-a": spark("spark-a"),
        "spark-b": spark("spark-b", driver="580.126.09", ota="7.5.0", address="192.168.100.11/24"),
    }
    skew = messages(compute_findings(hosts), "version_skew")
    assert (
        "driver differs between hosts: spark-a 580.95.05, spark-b 580.126.09; "
        "align them before clustering" in skew
    )
    assert any(m.startswith("DGX OTA differs") for m in skew)


def test_slow_link_nvcc_and_docker_permission() -> None:
    host = spark("spark-a", speed_mbps=100_000)
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
    host = spark("spark-a")
    host.docker = DockerFacts(installed=False, usable=False, problem="docker exited 127: not found")
    assert messages(compute_findings({"spark-a": host}), "docker_missing")


def test_docker_daemon_not_running() -> None:
    host = spark("spark-a")
    host.docker = DockerFacts(
        installed=True,
        usable=False,
        problem="Cannot connect to the Docker daemon at unix:///var/run/docker.sock.",
    )
    (finding,) = [f for f in compute_findings({"spark-a": host}) if f.kind == "docker_unusable"]
    assert finding.severity == "blocker" and "cannot reach its daemon" in finding.message


def test_page_cache_that_vllm_would_count_as_used() -> None:
    host = spark("spark-a", available_gb=116)
    host.memory.free_bytes = 19 * GB
    (finding,) = [f for f in compute_findings({"spark-a": host}) if f.kind == "page_cache_inflated"]
    assert finding.message.startswith(
        "spark-a: page cache holds ~97 GB (MemFree 19 GB, MemAvailable 116 GB)"
    )
    assert "drop_caches" in finding.message
