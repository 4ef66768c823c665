"""The scenarios of issue 14 say, as data, the world they claim to be (what a user would find)."""

from __future__ import annotations

import ipaddress

from sim.scenario import load_scenario
from tools.world.facts import GpuProcessFact, Image, ImageContents, MemoryFacts

MODEL = "Qwen/Qwen3.5-122B-A10B-FP8"
NGC = ("nvcr.io/nvidia/vllm", "26.05-py3")


def _cx7_addresses(scenario: str, host: str) -> dict[str, list[str]]:
    nics = load_scenario(scenario).hosts[host].nics
    return {name: nic.addresses for name, nic in nics.items() if nic.kind == "cx7" and nic.cable}


def test_fresh_pair_has_nothing_fetched_and_an_offline_worker() -> None:
    head, worker = load_scenario("fresh-pair").hosts.values()
    assert not head.hf_cache and not worker.hf_cache
    assert [(i.repository, i.tag) for i in head.docker.images] == [("vllm-node", "latest")]
    assert worker.docker.images == [] and worker.docker.pullable == []
    ngc = next(i for i in head.docker.pullable if (i.repository, i.tag) == NGC)
    assert "ray" not in ngc.tools and "vllm" in ngc.tools
    assert "vllm_node" in head.docker.containers
    assert head.hub[MODEL].size_gb == 119 and not head.hub[MODEL].gated
    assert head.internet and not worker.internet and not worker.hub


def test_gated_and_small_disk_variants_of_the_fresh_pair() -> None:
    assert load_scenario("gated-model").hosts["spark-a"].hub[MODEL].gated
    root = next(d for d in load_scenario("small-disk").hosts["spark-a"].disks if d.mount == "/")
    assert (root.size_kb - root.used_kb) * 1024 < 119e9


def test_link_local_pair_has_one_cable_with_169_254_addresses() -> None:
    for host in ("spark-a", "spark-b"):
        cabled = _cx7_addresses("link-local-pair", host)
        assert set(cabled) == {"enp1s0f1np1", "enP2p1s0f1np1"}  # one cage: two twins
        (address,) = cabled["enp1s0f1np1"]
        assert ipaddress.ip_interface(address).ip.is_link_local


def test_two_cable_variant_has_all_four_ports_link_local() -> None:
    cabled = _cx7_addresses("link-local-two-cables", "spark-a")
    assert len(cabled) == 4
    for addresses in cabled.values():
        assert [ipaddress.ip_interface(a).ip.is_link_local for a in addresses] == [True]


def test_mtu_1500_pair_disagrees_on_fabric_mtu() -> None:
    hosts = load_scenario("mtu-1500").hosts
    assert hosts["spark-a"].nics["enp1s0f1np1"].mtu == 9000
    assert hosts["spark-b"].nics["enp1s0f1np1"].mtu == 1500


def test_no_cx7_has_no_connectx_netdevs() -> None:
    for host in load_scenario("no-cx7").hosts.values():
        assert [n for n in host.nics.values() if n.kind == "cx7" or n.rdma_dev] == []


def test_fact_contract_for_images_swap_and_cut_memory() -> None:
    image = Image(repository="nvcr.io/nvidia/vllm", tag="26.05-py3")
    assert image.contents is None  # not probed
    probed = image.model_copy(update={"contents": ImageContents(vllm="0.19.1")})
    assert probed.contents is not None and probed.contents.ray is None
    assert MemoryFacts(swap_total_bytes=1, swap_used_bytes=0).swap_used_bytes == 0
    cut = GpuProcessFact(pid=1, name="VLLM::EngineCore", memory_cut=True)
    assert cut.memory_bytes is None and cut.memory_cut
