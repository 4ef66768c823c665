"""Recipes for the reference pair carry the values NVIDIA's two-Spark playbook uses."""

from __future__ import annotations

import shlex

from tests.support.sparks import reference_pair
from tools.deploy.choices import DeployChoices
from tools.deploy.fabric.paths import find_fabric
from tools.deploy.launch.recipes import build_recipe
from tools.deploy.rollout.order import order_steps

MODEL = "Qwen/Qwen3.5-122B-A10B-FP8"


def recipe(name: str, **options):
    choices = DeployChoices(model=MODEL, recipe=name, hosts=["spark-a", "spark-b"], **options)
    fabric = find_fabric(reference_pair(), choices.hosts)
    return build_recipe(choices, fabric)


def env_of(command: str) -> dict[str, str]:
    words = shlex.split(command)
    return dict(words[i + 1].split("=", 1) for i, w in enumerate(words) if w == "-e")


def test_vllm_ray_containers_carry_fabric_env_per_node() -> None:
    steps = {s.id: s for s in recipe("vllm-ray", max_model_len=32768).steps}
    head_run = steps["container:spark-a"].actions[0]
    worker_run = steps["container:spark-b"].actions[0]
    for flag in (
        "--network host",
        "--ipc host",
        "--gpus all",
        "--ulimit memlock=-1",
        "--ulimit stack=67108864",
        "--device /dev/infiniband",
        "-v ~/.cache/huggingface:/root/.cache/huggingface",
    ):
        assert flag in head_run and flag in worker_run
    assert head_run.startswith("docker run -d --name scout-vllm ")
    assert head_run.endswith("nvcr.io/nvidia/vllm:26.05-py3 sleep infinity")
    head, worker = env_of(head_run), env_of(worker_run)
    for name in (
        "NCCL_SOCKET_IFNAME",
        "GLOO_SOCKET_IFNAME",
        "TP_SOCKET_IFNAME",
        "UCX_NET_DEVICES",
        "OMPI_MCA_btl_tcp_if_include",
    ):
        assert head[name] == worker[name] == "enp1s0f1np1"
    assert head["NCCL_IB_HCA"] == worker["NCCL_IB_HCA"] == "rocep1s0f1,roceP2p1s0f1"
    assert head["NCCL_IB_DISABLE"] == "0"
    assert (head["VLLM_HOST_IP"], head["RAY_NODE_IP_ADDRESS"]) == ("192.168.100.10",) * 2
    assert (worker["VLLM_HOST_IP"], worker["RAY_NODE_IP_ADDRESS"]) == ("192.168.100.11",) * 2
    assert head["MASTER_ADDR"] == worker["MASTER_ADDR"] == "192.168.100.10"
    assert head["RAY_memory_monitor_refresh_ms"] == "0" and head["HF_HUB_OFFLINE"] == "1"


def test_vllm_ray_ray_and_serve_commands() -> None:
    steps = {s.id: s for s in recipe("vllm-ray", max_model_len=32768).steps}
    assert steps["ray-head:spark-a"].actions == [
        "docker exec scout-vllm ray start --head --port 6379 --node-ip-address 192.168.100.10 "
        "--disable-usage-stats"
    ]
    assert steps["ray-join:spark-b"].actions == [
        "docker exec scout-vllm ray start --address=192.168.100.10:6379 "
        "--node-ip-address 192.168.100.11"
    ]
    assert steps["ray-join:spark-b"].check.command == "docker exec scout-vllm ray status"
    assert steps["ray-join:spark-b"].check.passes(0, " 0.0/2.0 GPU\n")
    assert not steps["ray-join:spark-b"].check.passes(0, " 0.0/1.0 GPU\n")
    assert steps["serve:spark-a"].job == "scout-serve"
    assert "Application startup complete" in (steps["serve:spark-a"].ready or "")
    assert steps["serve:spark-a"].actions == [
        f"docker exec scout-vllm vllm serve {MODEL} --tensor-parallel-size 2 "
        "--distributed-executor-backend ray --host 0.0.0.0 --port 8000 "
        "--gpu-memory-utilization 0.8 --max-model-len 32768"
    ]
    assert steps["serve:spark-a"].check.command == "curl -sf http://localhost:8000/v1/models"
    assert steps["container:spark-a"].rollback == "docker rm -f scout-vllm"


def test_vllm_ray_order_head_then_worker_then_serve() -> None:
    order = [s.id for s in order_steps(recipe("vllm-ray").steps)]
    assert order == [
        "container:spark-a",
        "ray-head:spark-a",
        "container:spark-b",
        "ray-join:spark-b",
        "serve:spark-a",
    ]


def test_vllm_multinode_starts_headless_workers_first() -> None:
    steps = order_steps(recipe("vllm-multinode").steps)
    assert [s.host for s in steps] == ["spark-b", "spark-b", "spark-a", "spark-a"]
    worker_serve, head_serve = steps[1].actions[0], steps[3].actions[0]
    assert (
        "--nnodes 2 --node-rank 1 --master-addr 192.168.100.10 --master-port 29501" in worker_serve
    )
    assert worker_serve.endswith("--headless")
    assert "--node-rank 0" in head_serve and "--port 8000" in head_serve
    assert "--headless" not in head_serve
    assert "RAY_NODE_IP_ADDRESS" not in env_of(steps[0].actions[0])


def test_sglang_sets_its_host_ip_and_rendezvous() -> None:
    steps = {s.id: s for s in recipe("sglang").steps}
    assert env_of(steps["container:spark-b"].actions[0])["SGLANG_HOST_IP"] == "192.168.100.11"
    assert steps["container:spark-a"].actions[0].split()[-3] == "lmsysorg/sglang:latest-cu130"
    launch = steps["serve:spark-a"].actions[0]
    assert launch.startswith(
        f"docker exec scout-sglang python3 -m sglang.launch_server --model-path {MODEL} "
        "--tp 2 --nnodes 2 --node-rank 0 --dist-init-addr 192.168.100.10:20000 "
        "--host 0.0.0.0 --port 30000"
    )
    assert "--node-rank 1" in steps["rank:spark-b"].actions[0]


def test_ranks_run_as_jobs_whose_own_log_the_check_reads() -> None:
    """`docker exec -d` output never reaches `docker logs`: the rank check reads the job log."""
    for name in ("sglang", "vllm-multinode"):
        rank = {s.id: s for s in recipe(name).steps}["rank:spark-b"]
        assert rank.job == "scout-rank-1"
        assert not rank.actions[0].startswith("docker exec -d")
        assert (
            rank.check.command
            == 'tail -n 200 "${SCOUT_JOBS_DIR:-$HOME/.scout/jobs}/scout-rank-1"/log'
        )
        assert rank.check.absent and "docker logs" not in rank.check.command
        assert rank.check.passes(0, "INFO waiting for rank 0\n")
        assert not rank.check.passes(0, "Traceback (most recent call last):\n")


def test_both_twins_merged_for_nccl() -> None:
    steps = {s.id: s for s in recipe("vllm-ray").steps}
    env = env_of(steps["container:spark-b"].actions[0])
    assert env["NCCL_IB_HCA"] == "rocep1s0f1,roceP2p1s0f1"
    assert env["NCCL_IB_MERGE_NICS"] == "1"


def test_vllm_ray_installs_ray_where_the_image_has_none() -> None:
    choices = DeployChoices(model=MODEL, hosts=["spark-a", "spark-b"])
    fabric = find_fabric(reference_pair(), choices.hosts)
    steps = order_steps(build_recipe(choices, fabric, install_ray=frozenset(choices.hosts)).steps)
    ids = [s.id for s in steps]
    assert ids.index("ray-install:spark-a") < ids.index("ray-head:spark-a")
    assert ids.index("ray-install:spark-b") < ids.index("ray-join:spark-b")
    install = steps[ids.index("ray-install:spark-b")]
    assert install.actions == [
        "docker exec scout-vllm pip install -q --root-user-action=ignore 'ray[default]>=2.9'"
    ]
