"""The fabric each pair of crafted Spark facts yields: the cage, its twins, the addresses."""

from __future__ import annotations

import pytest

from tests.support.sparks import reference_pair, seed_pair, spark
from tools.deploy.fabric.paths import FabricError, cage_key, find_fabric


def test_reference_pair_uses_cage_p1_with_both_twins() -> None:
    fabric = find_fabric(reference_pair(), ["spark-a", "spark-b"])
    head, worker = fabric["spark-a"], fabric["spark-b"]
    assert (head.netdev, head.ip, head.hcas) == (
        "enp1s0f1np1",
        "192.168.100.10",
        ("rocep1s0f1", "roceP2p1s0f1"),
    )
    assert (worker.netdev, worker.ip, worker.link_up) == ("enp1s0f1np1", "192.168.100.11", True)


def test_cage_p0_cabled_is_found_without_being_told() -> None:
    hosts = {"a": spark("a", 10, cage="f0np0"), "b": spark("b", 11, cage="f0np0")}
    fabric = find_fabric(hosts, ["a", "b"])
    assert fabric["b"].netdev == "enp1s0f0np0"
    assert fabric["b"].hcas == ("rocep1s0f0", "roceP2p1s0f0")


def test_wrong_interface_names_the_one_that_works() -> None:
    hosts = {"a": spark("a", 10, cage="f0np0"), "b": spark("b", 11, cage="f0np0")}
    with pytest.raises(FabricError) as caught:
        find_fabric(hosts, ["a", "b"], interface="enp1s0f1np1")
    assert str(caught.value) == (
        "enp1s0f1np1 has no link or address on a, b; the fabric is on enp1s0f0np0 "
        "(a 192.168.100.10/24, b 192.168.100.11/24): use fabric_interface=enp1s0f0np0 or leave "
        "it unset"
    )


def test_worker_link_down_keeps_the_head_cage_and_lists_both_netdevs_to_raise() -> None:
    fabric = find_fabric(seed_pair(), ["spark-a", "spark-b"])
    worker = fabric["spark-b"]
    assert (worker.netdev, worker.ip, worker.link_up) == ("enp1s0f1np1", None, False)
    assert worker.down_netdevs == ("enp1s0f1np1", "enP2p1s0f1np1")
    assert worker.ip_or_lookup().startswith("$(ip -4 -br addr show dev enp1s0f1np1")


def test_cage_key_pairs_the_twins() -> None:
    assert cage_key("enp1s0f1np1") == cage_key("enP2p1s0f1np1") == "1s0f1np1"
