"""The fabric's environment for every library that talks across nodes: which netdev the socket
layers bind, and which HCAs NCCL uses and how. The engines' recipes and the fabric test both
run with it, so a fabric proven by the test is the fabric the engine gets."""

from __future__ import annotations

from tools.deploy.fabric.paths import FabricPath
from tools.deploy.recipe_book.engines import engine_book


def socket_env(path: FabricPath) -> dict[str, str]:
    """Every socket-level library pinned to the fabric netdev (NCCL, Gloo, TP, UCX, Open MPI)."""
    return {
        "NCCL_SOCKET_IFNAME": path.netdev,
        "GLOO_SOCKET_IFNAME": path.netdev,
        "TP_SOCKET_IFNAME": path.netdev,
        "UCX_NET_DEVICES": path.netdev,
        "OMPI_MCA_btl_tcp_if_include": path.netdev,
    }


def rdma_env(path: FabricPath) -> dict[str, str]:
    """NCCL on the path's HCAs: both PCIe twins of a Spark's cage (one twin caps at about half
    the link), or an InfiniBand node's rails; in a ring, every HCA routed by subnet with the
    settings NVIDIA's ring NCCL test passes (tools/deploy/fabric/paths.py). The constant part
    (NCCL_IB_DISABLE=0, NCCL_NET=IB: fail loudly rather than fall back to sockets) is data:
    recipe_book/bundled/engines.yaml."""
    env = {var.name: var.value for var in engine_book().rdma_env}
    if path.hcas:
        env["NCCL_IB_HCA"] = ",".join(path.hcas)
    if len(path.hcas) > 1 and not path.routed:
        # Both PCIe twins of one cage as one NIC: one real pair measured 98 Gb/s on one HCA
        # and 161 Gb/s with both merged (issue 14; docs/sources.md §3.4, §6 #5).
        env["NCCL_IB_MERGE_NICS"] = "1"
    if path.gid_index is not None:
        # the RoCE v2 IPv4 entry read on this node: another index (IPv6 link-local) hangs (§9)
        env["NCCL_IB_GID_INDEX"] = str(path.gid_index)
    if path.routed:
        env |= {
            "NCCL_IB_SUBNET_AWARE_ROUTING": "1",
            "NCCL_IB_MERGE_NICS": "0",
            "NCCL_NET_PLUGIN": "none",
        }
    return env
