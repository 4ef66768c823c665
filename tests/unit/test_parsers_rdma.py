"""RDMA devices: which ConnectX-7 ports are up, under either naming scheme."""

import pytest

from tests.support.captures import capture
from tools.recon.parsers import ParseError, parse_ibdev2netdev, parse_ibstat, parse_rdma_link_show


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


def test_ibstat_cx7_ethernet_port_down() -> None:
    [ca] = parse_ibstat(capture("generic_ibstat_cx7_ethernet_down.txt"))
    assert (ca.name, ca.ca_type, ca.firmware_version) == ("mlx5_0", "MT4129", "28.42.1000")
    [port] = ca.ports
    assert (port.state, port.physical_state, port.rate_gbps, port.link_layer) == (
        "Down",
        "Disabled",
        40.0,
        "Ethernet",
    )


def test_ibstat_all_active_infiniband_host() -> None:
    cas = parse_ibstat(capture("generic_ibstat_h100_cx7_ib_all_active.txt"))
    assert len(cas) == 9
    assert all(ca.ports[0].state == "Active" for ca in cas)
    assert cas[0].ports[0].rate_gbps == 400.0
    assert (cas[-1].name, cas[-1].ports[0].link_layer, cas[-1].ports[0].rate_gbps) == (
        "mlx5_bond_0",
        "Ethernet",
        200.0,
    )


def test_ibstat_without_firmware_lines() -> None:
    cas = parse_ibstat(capture("generic_ibstat_roce_cx6lx_down.txt"))
    assert [ca.name for ca in cas] == ["mlx5_0", "mlx5_1"]
    assert cas[1].firmware_version is None
    assert cas[1].ports[0].physical_state == "Disabled"


def test_ibstat_state_mismatch_kept_as_is() -> None:
    text = (
        "CA 'roceP2p1s0f1'\n\tPort 1:\n\t\tState: Down\n\t\tPhysical state: LinkUp\n\t\tRate: 200\n"
    )
    [ca] = parse_ibstat(text)
    assert (ca.ports[0].state, ca.ports[0].physical_state) == ("Down", "LinkUp")


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
