"""Provisioning reads the image's probed contents: Ray kept, installed, or the mp recipe."""

from __future__ import annotations

from tests.support.sparks import reference_pair
from tools.deploy.choices import DeployChoices
from tools.deploy.fabric import find_fabric
from tools.deploy.provision import ProvisionInput, provision
from tools.recon.facts import ImageContents

MODEL = "Qwen/Qwen3.5-122B-A10B-FP8"
CHOICES = DeployChoices(model=MODEL, hosts=["spark-a", "spark-b"]).resolved()


def decide(ray: str | None, offline: dict[str, str] | None = None):
    hosts = reference_pair()
    for facts in hosts.values():
        for image in facts.docker.images:
            image.contents = ImageContents(ray=ray, vllm="0.19.1")
    data = ProvisionInput(
        hosts=hosts, fabric=find_fabric(hosts, CHOICES.hosts), offline=offline or {}
    )
    return provision(data, CHOICES)


def test_ray_in_the_image_keeps_the_ray_recipe() -> None:
    found = decide("2.49.1")
    assert found.recipe == "vllm-ray" and not found.install_ray
    assert "Ray: in the image on every node (probed)" in found.notes


def test_ray_absent_is_installed_where_the_node_reaches_an_index() -> None:
    found = decide(None)
    assert found.recipe == "vllm-ray" and found.install_ray == {"spark-a", "spark-b"}
    assert "(spark-a: absent, spark-b: absent): installed into the container" in found.notes[-1]


def test_ray_absent_on_a_node_without_internet_takes_the_mp_recipe() -> None:
    found = decide(None, offline={"spark-b": "spark-a"})
    assert found.recipe == "vllm-multinode" and not found.install_ray
    assert "spark-b cannot pip install it (no internet there)" in found.notes[-1]
