"""Provisioning reads the image's probed contents: Ray kept, installed, or the mp recipe."""

from __future__ import annotations

from tests.support.sparks import reference_pair
from tools.deploy.choices import DeployChoices
from tools.deploy.fabric.paths import find_fabric
from tools.deploy.plan.provision import ProvisionInput, provision
from tools.world.facts import ImageContents

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
    assert "(absent on spark-a, spark-b): installed into the container" in found.notes[-1]


def test_ray_absent_on_a_node_without_internet_takes_the_mp_recipe() -> None:
    found = decide(None, offline={"spark-b": "spark-a"})
    assert found.recipe == "vllm-multinode" and not found.install_ray
    assert "spark-b cannot pip install it (no internet there)" in found.notes[-1]


def test_probed_images_are_not_asked_again() -> None:
    found = decide("2.49.1")
    assert not [s for s in found.steps if s.id.startswith("image-check:")]
    assert not any(note.startswith("image contents:") for note in found.notes)


def test_an_image_is_asked_once_it_is_there_and_once_per_image() -> None:
    hosts = reference_pair()
    hosts["spark-b"].docker.images = []  # spark-b lacks the image; spark-a's is not probed
    data = ProvisionInput(
        hosts=hosts, fabric=find_fabric(hosts, CHOICES.hosts), offline={"spark-b": "spark-a"}
    )
    found = provision(data, CHOICES)
    # spark-b's copy comes from spark-a with docker save | docker load (the same image ID):
    # asking spark-a's is asking both
    [check] = [s for s in found.steps if s.id.startswith("image-check:")]
    assert check.host == "spark-a" and check.needs == []
    assert check.check.expect == "^Name: vllm$"
    assert "--network none" in check.actions[0]
    said = (
        "image contents: asked on spark-a (`pip show` in a throwaway container); spark-b has "
        "the same image; the engine needs vllm in it"
    )
    assert said in found.notes
    # not probed and spark-b cannot pip install: the mp recipe, whatever the check finds
    assert found.recipe == "vllm-multinode"
    assert found.notes[-1].endswith("(no Ray) instead, whatever the image check finds")


def test_pulled_images_are_each_asked_after_they_arrive_unless_recon_saw_one_id() -> None:
    hosts = reference_pair()
    for facts in hosts.values():
        facts.docker.images = []
    data = ProvisionInput(hosts=hosts, fabric=find_fabric(hosts, CHOICES.hosts))
    checks = {s.host: s.needs for s in provision(data, CHOICES).steps if "check:" in s.id}
    assert checks == {"spark-a": ["pull:spark-a"], "spark-b": ["pull:spark-b"]}
    hosts = reference_pair()
    for facts in hosts.values():
        facts.docker.images[0].id = "a41c7e90d2b3"  # the same image on both
    data = ProvisionInput(hosts=hosts, fabric=find_fabric(hosts, CHOICES.hosts))
    found = provision(data, CHOICES)
    assert [s.host for s in found.steps if s.id.startswith("image-check:")] == ["spark-a"]
