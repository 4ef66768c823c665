"""NCCL_IB_GID_INDEX: the RoCE v2 IPv4 entry of each node's GID table, read per node."""

from __future__ import annotations

import shlex

from tests.support.sparks import reference_pair
from tools.deploy.choices import DeployChoices
from tools.deploy.fabric.paths import find_fabric
from tools.deploy.launch.recipes import build_recipe
from tools.recon.parsers import parse_ibv_gids
from tools.world.facts import RoceGidEntry

# rdma-core devinfo.c's layout (print_formated_gid), as `ibv_devinfo -v | grep -E 'hca_id|GID'`
# prints it for a Spark whose netdev also has a global IPv6 address: the IPv4 v2 entry is at 5
# and 3 is the IPv6 one (docs/sources.md §9).
DEVINFO = """\
hca_id:\trocep1s0f1
\t\t\tGID[  0]:\t\tfe80:0000:0000:0000:4ebb:47ff:fe2f:7d1b, RoCE v1
\t\t\tGID[  1]:\t\tfe80::4ebb:47ff:fe2f:7d1b, RoCE v2
\t\t\tGID[  2]:\t\t2001:0db8:0000:0000:0000:0000:0000:0010, RoCE v1
\t\t\tGID[  3]:\t\t2001:db8::10, RoCE v2
\t\t\tGID[  4]:\t\t0000:0000:0000:0000:0000:ffff:c0a8:640a, RoCE v1
\t\t\tGID[  5]:\t\t::ffff:192.168.100.10, RoCE v2
hca_id:\troceP2p1s0f1
\t\t\tGID[  0]:\t\tfe80:0000:0000:0000:4ebb:47ff:fe2f:7d1f, RoCE v1
\t\t\tGID[  1]:\t\tfe80::4ebb:47ff:fe2f:7d1f, RoCE v2
"""


def test_only_roce_v2_entries_of_ipv4_addresses_are_kept():
    gids = parse_ibv_gids(DEVINFO)
    assert [(g.device, g.index, g.ipv4) for g in gids] == [("rocep1s0f1", 5, "192.168.100.10")]


def _with_gids(index_a: int, index_b: int | None):
    hosts = reference_pair()
    for host, octet in (("spark-a", 10), ("spark-b", 11)):
        entries = [RoceGidEntry(device="rocep1s0f1", index=index_a, ipv4=f"192.168.100.{octet}")]
        if index_b is not None:
            entries.append(
                RoceGidEntry(device="roceP2p1s0f1", index=index_b, ipv4=f"192.168.101.{octet}")
            )
        hosts[host].rdma.roce_v2_ipv4_gids = entries
    return hosts


def _env(hosts) -> dict[str, str]:
    choices = DeployChoices(model="m/x", recipe="vllm-ray", hosts=["spark-a", "spark-b"])
    steps = {s.id: s for s in build_recipe(choices, find_fabric(hosts, choices.hosts)).steps}
    words = shlex.split(steps["container:spark-b"].actions[0])
    return dict(words[i + 1].split("=", 1) for i, w in enumerate(words) if w == "-e")


def test_the_index_every_hca_shares_goes_to_nccl_with_ib_as_the_only_net():
    env = _env(_with_gids(5, 5))
    assert env["NCCL_IB_GID_INDEX"] == "5"
    assert env["NCCL_NET"] == "IB"


def test_no_index_where_the_hcas_disagree_or_one_has_no_ipv4_entry():
    assert "NCCL_IB_GID_INDEX" not in _env(_with_gids(3, 5))
    assert "NCCL_IB_GID_INDEX" not in _env(_with_gids(3, None))
