"""Fabric paths and recipes beyond a pair: a ring of three Sparks, a switch, 8-GPU InfiniBand
nodes; what the commands say to each node."""

from __future__ import annotations

import shlex

from tests.support.hgx import h100_node
from tests.support.sparks import spark, spark_ring
from tools.checks import GB
from tools.deploy.choices import DeployChoices
from tools.deploy.fabric.paths import find_fabric
from tools.deploy.launch.recipes import build_recipe
from tools.deploy.plan.preflight import PreflightInput, run_preflight

MODEL = "Qwen/Qwen3.5-122B-A10B-FP8"


def env_of(command: str) -> dict[str, str]:
    words = shlex.split(command)
    return dict(words[i + 1].split("=", 1) for i, w in enumerate(words) if w == "-e")


def test_two_of_the_ring_talk_over_their_own_cable_with_other_names_per_node() -> None:
    paths = find_fabric(spark_ring(), ["spark-a", "spark-b"])
    a, b = paths["spark-a"], paths["spark-b"]
    assert (a.netdev, a.ip, a.hcas) == (
        "enp1s0f0np0",
        "192.168.0.1",
        ("rocep1s0f0", "roceP2p1s0f0"),
    )
    assert (b.netdev, b.ip, b.hcas) == (
        "enp1s0f1np1",
        "192.168.0.3",
        ("rocep1s0f1", "roceP2p1s0f1"),
    )
    assert not a.routed and not b.routed


def test_all_three_of_the_ring_route_nccl_by_subnet_and_sockets_over_the_lan() -> None:
    paths = find_fabric(spark_ring(), ["spark-a", "spark-b", "spark-c"])
    assert [(p.netdev, p.ip) for p in paths.values()] == [
        ("enP7s7", "10.0.0.1"),
        ("enP7s7", "10.0.0.3"),
        ("enP7s7", "10.0.0.5"),
    ]
    assert all(p.routed for p in paths.values())
    choices = DeployChoices(
        model=MODEL, hosts=["spark-a", "spark-b", "spark-c"], tensor_parallel=1, pipeline_parallel=3
    ).resolved()
    steps = {s.id: s for s in build_recipe(choices, paths).steps}
    env = env_of(steps["container:spark-c"].actions[0])
    assert env["NCCL_IB_HCA"] == "rocep1s0f0,rocep1s0f1,roceP2p1s0f0,roceP2p1s0f1"
    assert env["NCCL_IB_SUBNET_AWARE_ROUTING"] == "1" and env["NCCL_IB_MERGE_NICS"] == "0"
    assert env["NCCL_NET_PLUGIN"] == "none" and env["NCCL_SOCKET_IFNAME"] == "enP7s7"
    assert env["MASTER_ADDR"] == "10.0.0.1"
    serve = steps["serve:spark-a"].actions[0]
    assert "--tensor-parallel-size 1 --pipeline-parallel-size 3" in serve


def test_ring_preflight_warns_that_the_ring_needs_nccl_that_routes() -> None:
    ring = spark_ring()
    report = run_preflight(
        PreflightInput(hosts=ring, model_size_bytes=200 * GB),
        DeployChoices(model=MODEL, hosts=list(ring)),
    )
    fabric = next(f for f in report.findings if f.check == "fabric")
    assert fabric.severity == "warning" and fabric.kind == "fabric_routed"
    assert report.choices.hosts == ["spark-a", "spark-b", "spark-c"]
    assert (report.choices.tensor_parallel, report.choices.pipeline_parallel) == (1, 3)


def test_infiniband_nodes_give_nccl_their_rails_and_sockets_the_ethernet() -> None:
    hosts = {"h100-a": h100_node("h100-a", 11), "h100-b": h100_node("h100-b", 12)}
    paths = find_fabric(hosts, ["h100-a", "h100-b"])
    rails = ("mlx5_0", "mlx5_3", "mlx5_4", "mlx5_5", "mlx5_6", "mlx5_8", "mlx5_9", "mlx5_10")
    for octet, path in zip((11, 12), paths.values(), strict=True):
        assert (path.netdev, path.ip, path.hcas) == ("enp170s0np0", f"10.10.0.{octet}", rails)
    report = run_preflight(
        PreflightInput(hosts=hosts, model_size_bytes=700 * GB),
        DeployChoices(model=MODEL, hosts=list(hosts)),
    )
    choices = report.choices
    assert (choices.tensor_parallel, choices.pipeline_parallel, choices.gpus_per_node) == (8, 2, 8)
    steps = {s.id: s for s in build_recipe(choices, paths).steps}
    env = env_of(steps["container:h100-b"].actions[0])
    assert env["NCCL_IB_HCA"] == ",".join(rails)
    assert not {k for k in env if "ROCE" in k or "GID" in k or "ROUTING" in k}
    assert steps["ray-join:h100-b"].check.expect == r"/16\.0 GPU"
    serve = steps["serve:h100-a"].actions[0]
    assert "--tensor-parallel-size 8 --pipeline-parallel-size 2" in serve


def test_ranked_engines_take_every_node_with_its_rank() -> None:
    hosts = {f"spark-{c}": spark(f"spark-{c}", 10 + i) for i, c in enumerate("abcd")}
    for recipe, pp_flag in (
        ("vllm-multinode", "--pipeline-parallel-size"),
        ("sglang", "--pp-size"),
    ):
        choices = DeployChoices(
            model=MODEL, recipe=recipe, hosts=list(hosts), tensor_parallel=2, pipeline_parallel=2
        ).resolved()
        steps = build_recipe(choices, find_fabric(hosts, list(hosts))).steps
        launches = [s.actions[0] for s in steps if s.id.startswith(("rank:", "serve:"))]
        assert [s.host for s in steps if s.id.startswith(("rank:", "serve:"))] == [
            "spark-b",
            "spark-c",
            "spark-d",
            "spark-a",
        ]
        for rank, launch in zip((1, 2, 3, 0), launches, strict=True):
            assert f"--nnodes 4 --node-rank {rank}" in launch
            assert f"{pp_flag} 2" in launch
            assert "192.168.100.10:" in launch or "--master-addr 192.168.100.10" in launch


def test_one_node_needs_no_rendezvous_flags() -> None:
    hosts = {"h100-a": h100_node("h100-a", 11)}
    choices = DeployChoices(model=MODEL, recipe="sglang", hosts=["h100-a"], tensor_parallel=8)
    steps = build_recipe(choices.resolved(), find_fabric(hosts, ["h100-a"])).steps
    launch = steps[-1].actions[0]
    assert "--tp 8" in launch and "--nnodes" not in launch and "--dist-init-addr" not in launch


def test_without_a_model_size_the_hosts_given_are_used_or_as_many_as_asked() -> None:
    hosts = {f"spark-{c}": spark(f"spark-{c}", 10 + i) for i, c in enumerate("abc")}
    every = run_preflight(
        PreflightInput(hosts=hosts), DeployChoices(model=MODEL, hosts=list(hosts))
    )
    assert every.choices.hosts == list(hosts) and every.choices.tensor_parallel == 1
    assert every.choices.pipeline_parallel == 3  # three single-GPU nodes: pipeline stages
    two = run_preflight(
        PreflightInput(hosts=hosts), DeployChoices(model=MODEL, hosts=list(hosts), nodes=2)
    )
    assert two.choices.hosts == ["spark-a", "spark-b"] and two.choices.tensor_parallel == 2
    layout = next(f for f in two.findings if f.check == "layout")
    assert layout.message.startswith("2 of 3 nodes: the model's size is unknown")
    down = run_preflight(
        PreflightInput(hosts=hosts, unreachable={"spark-c": "connection refused"}),
        DeployChoices(model=MODEL, hosts=list(hosts)),
    )
    assert [f.kind for f in down.blockers] == ["host_unreachable"]


def test_a_worker_that_is_down_is_left_out_when_the_others_suffice() -> None:
    hosts = {f"spark-{c}": spark(f"spark-{c}", 10 + i) for i, c in enumerate("abc")}
    report = run_preflight(
        PreflightInput(
            hosts=hosts, unreachable={"spark-b": "timed out"}, model_size_bytes=119 * GB
        ),
        DeployChoices(model=MODEL, hosts=list(hosts)),
    )
    assert report.ok and report.choices.hosts == ["spark-a", "spark-c"]
    layout = next(f for f in report.findings if f.check == "layout")
    assert layout.message.endswith("(spark-b did not answer and is left out)")
