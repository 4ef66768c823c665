"""RDMA devices: which ConnectX-7 ports are up, under either naming scheme."""

import pytest

from tests.support.captures import capture
from tools.recon.parsers import ParseError, parse_ibdev2netdev, parse_rdma_link_show


def test_ibdev2netdev_up_and_down_per_device() -> None:
    entries = parse_ibdev2netdev(capture("spark_ibdev2netdev_p1_up.txt"))
    assert {e.device: (e.netdev, e.is_up) for e in entries} == {
        "roceP2p1s0f0": ("enP2p1s0f0np0", False),
        "roceP2p1s0f1": ("enP2p1s0f1np1", True),
        "rocep1s0f0": ("enp1s0f0np0", False),
        "rocep1s0f1": ("enp1s0f1np1", True),
    }


def test_ibdev2netdev_mlx5_names_any_order() -> None:
    [single] = parse_ibdev2netdev(capture("generic_ibdev2netdev_mlx5_single.txt"))
    assert (single.device, single.port, single.netdev, single.is_up) == (
        "mlx5_1",
        1,
        "ens1f1",
        True,
    )
    mixed = parse_ibdev2netdev(
        "mlx5_3 port 1 ==> enP2p1s0f1np1 (Up)\nmlx5_0 port 1 ==> enp1s0f0np0 (Down)\n"
    )
    assert [(e.device, e.is_up) for e in mixed] == [("mlx5_3", True), ("mlx5_0", False)]


def test_ibdev2netdev_no_devices_and_wrong_text() -> None:
    assert parse_ibdev2netdev("") == []
    with pytest.raises(ParseError, match="ibdev2netdev"):
        parse_ibdev2netdev("usage: something else entirely")


def test_rdma_link_show_on_spark() -> None:
    links = parse_rdma_link_show(capture("spark_rdma_link_show.txt"))
    assert {(link.device, link.port): (link.state, link.netdev) for link in links} == {
        ("rocep1s0f0", 1): ("DOWN", "enp1s0f0np0"),
        ("rocep1s0f1", 1): ("ACTIVE", "enp1s0f1np1"),
        ("roceP2p1s0f0", 1): ("DOWN", "enP2p1s0f0np0"),
        ("roceP2p1s0f1", 1): ("ACTIVE", "enP2p1s0f1np1"),
    }
    assert [link.is_up for link in links] == [False, True, False, True]


def test_rdma_link_fields_by_key_with_state_mismatch() -> None:
    text = (
        "link rocep1s0f1/1 subnet_prefix fe80::  lid 0 "
        "state DOWN physical_state LINK_UP netdev enp1s0f1np1\n"
    )
    [link] = parse_rdma_link_show(text)
    assert (link.state, link.physical_state, link.netdev) == ("DOWN", "LINK_UP", "enp1s0f1np1")
    assert link.is_up is False
    assert link.attributes["lid"] == "0"
