"""Preflight on crafted facts: each blocker with its message and what to do."""

from __future__ import annotations

from tests.support.sparks import reference_pair, seed_pair, spark
from tools.deploy.choices import DeployChoices
from tools.deploy.plan.fit import GB
from tools.deploy.plan.preflight import PreflightInput, run_preflight

MODEL = "Qwen/Qwen3.5-122B-A10B-FP8"
PAIR = ["spark-a", "spark-b"]


def blockers(hosts, unreachable=None, size=119 * GB, links_tried=frozenset(), **options):
    choices = DeployChoices(model=MODEL, hosts=PAIR, **options)
    report = run_preflight(
        PreflightInput(hosts, unreachable or {}, size, links_tried=links_tried), choices
    )
    return {f.check: f for f in report.blockers}


def test_reference_pair_passes() -> None:
    assert blockers(reference_pair()) == {}


def test_seed_pair_blocks_on_memory_port_and_link() -> None:
    found = blockers(seed_pair())
    assert set(found) == {"memory", "ports", "fabric"}
    assert found["ports"].message == "port 8000 (serving) on spark-a is taken by vllm_node"
    assert found["fabric"].message == "the RoCE link of spark-b is down (enp1s0f1np1)"
    assert found["fabric"].fix == (
        "run `sudo ip link set enp1s0f1np1 up && sudo ip link set enP2p1s0f1np1 up` on spark-b; "
        "if it stays down, reseat the cable (needs a person)"
    )
    assert found["memory"].fix == "stop vllm_node"


def test_link_that_stayed_down_needs_a_person() -> None:
    found = blockers(seed_pair(), links_tried=frozenset({"spark-b"}))
    assert found["fabric"].needs_person
    assert "stays down after `ip link set … up`" in found["fabric"].message
    assert "needs a person at the machine" in (found["fabric"].fix or "")


def test_worker_unreachable() -> None:
    hosts = reference_pair()
    found = blockers(hosts, unreachable={"spark-b": "No route to host"})
    assert found["reachable"].message == "spark-b did not answer (spark-b: No route to host)"


def test_missing_image_is_left_to_the_plan_to_pull() -> None:
    hosts = {"spark-a": spark("spark-a", 10), "spark-b": spark("spark-b", 11, images=[])}
    report = run_preflight(
        PreflightInput(hosts=hosts), DeployChoices(model=MODEL, hosts=list(hosts))
    )
    found = {f.check: f for f in report.findings}
    assert found["image"].severity == "warning"
    assert found["image"].message == "image nvcr.io/nvidia/vllm:26.05-py3 is missing on spark-b"
    assert "the plan pulls it there as jobs" in (found["image"].fix or "")


def test_not_enough_memory_anywhere() -> None:
    found = blockers(reference_pair(), size=240 * GB)
    assert found["memory"].fix == "use more nodes or a smaller (quantised) model"
    assert "→ does not fit on this node" in found["memory"].message


def test_no_rdma_devices_needs_a_person() -> None:
    hosts = {"spark-a": spark("spark-a", 10), "spark-b": spark("spark-b", 11, rdma=False)}
    found = blockers(hosts)
    assert found["rdma"].needs_person
    assert found["rdma"].message == "no RDMA devices on spark-b (no ConnectX port at all)"


def test_driver_skew_is_a_warning_not_a_blocker() -> None:
    hosts = {"spark-a": spark("spark-a", 10), "spark-b": spark("spark-b", 11, driver="580.142")}
    choices = DeployChoices(model=MODEL, hosts=PAIR)
    report = run_preflight(PreflightInput(hosts, {}, 119 * GB), choices)
    assert report.ok
    assert [f.message for f in report.findings if f.check == "versions"] == [
        "driver differs between hosts: spark-a 580.95.05, spark-b 580.142"
    ]


def weights_checks(hosts, **options):
    choices = DeployChoices(model=MODEL, hosts=PAIR, **options)
    report = run_preflight(PreflightInput(hosts, {}, 119 * GB), choices)
    return {f.hosts[0]: f for f in report.findings if f.check == "weights"}


def test_unplugged_link_needs_a_person_at_once() -> None:
    hosts = seed_pair()
    for nic in hosts["spark-b"].network.interfaces:
        if nic.name in ("enp1s0f1np1", "enP2p1s0f1np1"):
            nic.carrier = False
    found = blockers(hosts)
    assert found["fabric"].needs_person
    assert "is up but has no carrier (NO-CARRIER on enp1s0f1np1" in found["fabric"].message


def test_cached_models_come_from_the_facts() -> None:
    hosts = reference_pair()
    hosts["spark-a"].hf_cache.models = {MODEL: 119 * GB}
    hosts["spark-b"].hf_cache.models = {MODEL: 40 * GB}
    checks = weights_checks(hosts)
    assert checks["spark-a"].severity == "ok"
    assert checks["spark-b"].severity == "warning"
    assert "only partly cached (40.0 GB of 119.0 GB) on spark-b" in checks["spark-b"].message
    assert (
        checks["spark-b"].fix == "the plan copies it from spark-a to spark-b with rsync, as a job"
    )
    hosts["spark-a"].hf_cache.models = {}
    checks = weights_checks(hosts)
    assert (
        checks["spark-a"].fix == f"the plan downloads it on spark-a as a job: `hf download {MODEL}`"
    )
    assert checks["spark-b"].fix == (
        "the plan copies it from spark-a to spark-b with rsync, as a job, after the download on "
        "spark-a"
    )
    assert weights_checks(hosts, hf_cache="/data/hf")["spark-a"].message.endswith(
        "not known to be cached on spark-a; the engine runs with HF_HUB_OFFLINE=1"
    )
