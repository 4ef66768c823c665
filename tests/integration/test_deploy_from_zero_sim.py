"""plan_deployment on the worlds of issue 14: the plan reads what is there and what is not."""

import shlex

import pytest

from tests.integration.test_deploy_variants_sim import BASE, plan_on

pytestmark = pytest.mark.slow

TOKEN = "hf_h13TestTokenNeverShownAnywhere0123"


@pytest.fixture(autouse=True)
def _no_token(monkeypatch):
    monkeypatch.delenv("HF_TOKEN", raising=False)


def env_in(text: str, name: str) -> list[str]:
    """Every value of `-e NAME=…` in the plan's commands."""
    values = []
    for line in text.splitlines():
        if "docker run" in line:
            words = shlex.split(line.split("$", 1)[-1])
            values += [w.split("=", 1)[1] for w in words if w.startswith(f"{name}=")]
    return values


async def test_link_local_on_one_cable_serves_over_its_link_local_addresses():
    result = await plan_on("link-local-pair", BASE)
    assert not result.get("is_error"), result["content"]
    text = result["content"]
    assert "link-local addresses over one cable, as NVIDIA's guide allows" in text
    assert sorted(env_in(text, "VLLM_HOST_IP")) == ["169.254.127.30", "169.254.35.62"]
    assert "40-cx7.yaml" not in text


async def test_link_local_on_two_cables_gets_nvidias_netplan_first():
    result = await plan_on("link-local-two-cables", BASE)
    text = result["content"]
    assert "/etc/netplan/40-cx7.yaml" in text and "sudo netplan apply" in text
    assert "192.168.100.10/24" in text and "192.168.101.11/24" in text
    assert text.index("40-cx7.yaml") < text.index("vllm serve")
    assert "scout-backup" in text  # the rollback restores the file it replaced
    assert sorted(env_in(text, "VLLM_HOST_IP")) == ["192.168.100.10", "192.168.100.11"]


@pytest.mark.parametrize("scenario", ["small-disk", "gated-model"])
async def test_stops_before_any_download_with_a_clear_blocker(scenario):
    result = await plan_on(scenario, BASE | ({"gated": True} if scenario == "gated-model" else {}))
    assert result["is_error"]
    text = result["content"]
    assert text.startswith("Cannot plan this deployment yet (nothing was downloaded):")
    assert "hf download" not in text and "rsync" not in text
    if scenario == "small-disk":
        assert "is free (needs" in text
    else:
        assert "is gated on the Hugging Face Hub" in text and "HF_TOKEN" in text


async def test_gated_with_a_token_downloads_with_it_and_never_shows_it(monkeypatch):
    monkeypatch.setenv("HF_TOKEN", TOKEN)
    result = await plan_on("gated-model", BASE | {"gated": True})
    text = result["content"]
    assert "(as job download-weights, with HF_TOKEN from the operator's environment)" in text
    assert TOKEN not in text


async def test_fresh_pair_pulls_copies_downloads_and_says_how():
    result = await plan_on("fresh-pair", BASE)
    text = result["content"]
    assert "docker pull nvcr.io/nvidia/vllm:26.05-py3" in text
    assert "docker save nvcr.io/nvidia/vllm:26.05-py3 | ssh " in text  # the worker: no internet
    assert "hf download Qwen/Qwen3.5-122B-A10B-FP8" in text
    assert "rsync -a --mkpath --info=progress2" in text
    assert "vLLM's multiprocess recipe" in text  # no Ray, and the worker cannot pip install it
    assert "--distributed-executor-backend mp" in text
    assert "--max-model-len" in text and "--gpu-memory-utilization" in text
    assert "Engine settings:" in text


async def test_plan_shows_the_engine_memory_settings_it_chose():
    result = await plan_on("healthy-pair", BASE)
    text = result["content"]
    settings = text[text.index("Engine settings:") :]
    assert "--gpu-memory-utilization 0.8: CUDA can allocate at most" in settings
    assert "--max-model-len " in settings and "left for the KV cache" in settings


async def test_mtu_mismatch_is_a_finding():
    result = await plan_on("mtu-1500", BASE)
    assert "the fabric's ends disagree on MTU" in result["content"]
    assert "mtu 9000" in result["content"]
