"""What an earlier deployment or a host's guard leaves behind: a Ray cluster holding the GPUs
with no engine serving, one image tag with two IDs across nodes, earlyoom running."""

from __future__ import annotations

from tests.support.captured_host import WHEN
from tests.support.captures import job_capture
from tests.support.sparks import VLLM_IMAGE, spark
from tools.checks import compute_findings
from tools.recon.probe_parse import facts_from_sections
from tools.recon.sections import Section
from tools.world.facts import Image

RAY_FULL = "ray_status_2nodes_16gpu_all_reserved_in_placement_groups.txt"


def _kinds(hosts, kind: str):
    return [f for f in compute_findings(hosts) if f.kind == kind]


def test_a_ray_cluster_holding_every_gpu_with_no_engine_is_a_blocker() -> None:
    sections = {"ray": Section("ray", job_capture(RAY_FULL), 0)}
    host = facts_from_sections("gpu-1", sections, WHEN)

    stale = _kinds({"gpu-1": host}, "ray_holds_gpus")

    assert (host.services.ray_gpus_used, host.services.ray_gpus_total) == (16.0, 16.0)
    assert stale[0].severity == "blocker" and "holds 16 of its 16 GPUs" in stale[0].message
    assert "ray stop" in (stale[0].fix or "")


def test_the_same_tag_with_two_ids_across_nodes_is_a_finding() -> None:
    a, b = spark("spark-a", 10), spark("spark-b", 11)
    a.docker.images = [VLLM_IMAGE.model_copy(update={"id": "sha256:1111aaaa2222bbbb3333"})]
    b.docker.images = [VLLM_IMAGE.model_copy(update={"id": "sha256:9999ffff8888eeee7777"})]
    same = spark("spark-b", 11)
    same.docker.images = list(a.docker.images)

    differs = _kinds({"spark-a": a, "spark-b": b}, "image_differs")

    assert differs[0].hosts == ["spark-a", "spark-b"]
    assert differs[0].message.startswith("nvcr.io/nvidia/vllm:26.05-py3 is not the same image")
    assert not _kinds({"spark-a": a, "spark-b": same}, "image_differs")


def test_earlyoom_running_is_a_warning_and_its_absence_is_not() -> None:
    running = {"earlyoom": Section("earlyoom", "1234\n", 0)}
    absent = {"earlyoom": Section("earlyoom", "", 0)}

    found = _kinds({"h": facts_from_sections("h", running, WHEN)}, "earlyoom_running")

    assert found and "sudo systemctl stop earlyoom" in (found[0].fix or "")
    assert not _kinds({"h": facts_from_sections("h", absent, WHEN)}, "earlyoom_running")


def test_untagged_images_are_not_compared() -> None:
    a, b = spark("spark-a", 10), spark("spark-b", 11)
    a.docker.images = [Image(repository="<none>", tag=None, id="sha256:1")]
    b.docker.images = [Image(repository="<none>", tag=None, id="sha256:2")]

    assert not _kinds({"spark-a": a, "spark-b": b}, "image_differs")
