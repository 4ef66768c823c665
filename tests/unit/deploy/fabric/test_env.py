"""tools/deploy/fabric/env.py: the env every cross-node library gets from one node's fabric end."""

from __future__ import annotations

from tools.deploy.fabric.env import rdma_env, socket_env
from tools.deploy.fabric.paths import FabricPath

TWINS = FabricPath(
    host="spark-a",
    netdev="enp1s0f1np1",
    ip="192.168.100.10",
    hcas=("rocep1s0f1", "roceP2p1s0f1"),
    link_up=True,
    gid_index=3,
)


def test_every_socket_layer_binds_the_fabric_netdev() -> None:
    env = socket_env(TWINS)
    assert set(env.values()) == {"enp1s0f1np1"}
    assert {"NCCL_SOCKET_IFNAME", "GLOO_SOCKET_IFNAME", "OMPI_MCA_btl_tcp_if_include"} <= set(env)


def test_a_cage_s_twins_are_one_nic_with_the_gid_read_on_the_node() -> None:
    env = rdma_env(TWINS)
    assert env["NCCL_IB_HCA"] == "rocep1s0f1,roceP2p1s0f1"
    assert env["NCCL_IB_MERGE_NICS"] == "1"
    assert env["NCCL_IB_GID_INDEX"] == "3"
    assert env["NCCL_NET"] == "IB"  # fail loudly rather than fall back to sockets


def test_a_ring_routes_by_subnet_and_never_merges() -> None:
    ring = FabricPath(
        host="spark-a",
        netdev="enp1s0f0np0",
        ip="10.0.0.1",
        hcas=TWINS.hcas,
        link_up=True,
        routed=True,
    )
    env = rdma_env(ring)
    assert env["NCCL_IB_SUBNET_AWARE_ROUTING"] == "1"
    assert env["NCCL_IB_MERGE_NICS"] == "0"
    assert "NCCL_IB_GID_INDEX" not in env


def test_one_hca_is_named_and_not_merged() -> None:
    one = FabricPath(host="h200", netdev="ib0", ip="10.1.0.2", hcas=("mlx5_0",), link_up=True)
    env = rdma_env(one)
    assert env["NCCL_IB_HCA"] == "mlx5_0" and "NCCL_IB_MERGE_NICS" not in env
