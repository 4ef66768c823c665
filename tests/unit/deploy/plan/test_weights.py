"""The weights check on crafted cache facts: a copy counts only when its size, its leftovers and
its revision all say it is whole, and each finding says which check failed."""

from __future__ import annotations

from tests.support.sparks import reference_pair
from tools.deploy.choices import DeployChoices
from tools.deploy.plan.fit import GB
from tools.deploy.plan.preflight import PreflightInput, run_preflight
from tools.world.facts import CacheCopy

MODEL = "Qwen/Qwen3.5-122B-A10B-FP8"
OLD = "abc1234" + "0" * 33
NEW = "abc9999" + "f" * 33
HUB = "fedcba9" + "8" * 33


def cached(hosts, host: str, revision: str | None, size=119 * GB, incomplete=0) -> None:
    hosts[host].hf_cache.models = {MODEL: size}
    hosts[host].hf_cache.copies = {
        MODEL: CacheCopy(revision=revision, snapshot=True, incomplete_blobs=incomplete)
    }


def weights(hosts, hub_revision: str | None = None):
    choices = DeployChoices(model=MODEL, hosts=["spark-a", "spark-b"])
    report = run_preflight(PreflightInput(hosts, {}, 119 * GB, hub_revision=hub_revision), choices)
    return {f.hosts[0]: f for f in report.findings if f.check == "weights"}


def test_a_worker_at_another_revision_than_the_head_is_copied_again() -> None:
    hosts = reference_pair()
    cached(hosts, "spark-a", NEW)
    cached(hosts, "spark-b", OLD)
    found = weights(hosts)
    assert found["spark-b"].kind == "weights_old_revision"
    assert found["spark-b"].message == (
        f"{MODEL} on spark-b is at revision abc1234, the head spark-a's is abc9999: copied again"
    )
    assert found["spark-b"].fix == "the plan copies it from spark-a to spark-b with rsync, as a job"
    # the head's own copy: nothing says which revision it should be, and the finding says so
    assert found["spark-a"].severity == "ok"
    assert found["spark-a"].message == (
        f"{MODEL} cached on spark-a (119.0 GB at abc9999, none unfinished; size checked, not "
        "the revision: the Hub's is not known)"
    )


def test_a_matching_complete_copy_is_kept() -> None:
    hosts = reference_pair()
    cached(hosts, "spark-a", NEW)
    cached(hosts, "spark-b", NEW)
    found = weights(hosts)
    assert found["spark-b"].kind == "weights_cached"
    assert found["spark-b"].message == (
        f"{MODEL} cached on spark-b (119.0 GB at abc9999, the head spark-a's revision, "
        "none unfinished)"
    )


def test_the_hubs_current_revision_wins_and_the_head_downloads_again() -> None:
    hosts = reference_pair()
    cached(hosts, "spark-a", NEW)
    cached(hosts, "spark-b", HUB)
    found = weights(hosts, hub_revision=HUB)
    assert found["spark-a"].kind == "weights_old_revision"
    assert found["spark-a"].message == (
        f"{MODEL} on spark-a is at revision abc9999, the Hub's current is fedcba9: downloaded again"
    )
    assert (
        found["spark-a"].fix == f"the plan downloads it on spark-a as a job: `hf download {MODEL}`"
    )
    assert found["spark-b"].message == (
        f"{MODEL} cached on spark-b (119.0 GB at fedcba9, the Hub's current revision, "
        "none unfinished)"
    )


def test_leftover_incomplete_blobs_mean_unfinished_whatever_the_size() -> None:
    hosts = reference_pair()
    cached(hosts, "spark-a", NEW)
    cached(hosts, "spark-b", NEW, incomplete=1)
    found = weights(hosts)
    assert found["spark-b"].kind == "weights_unfinished"
    assert found["spark-b"].message == (
        f"{MODEL} on spark-b is unfinished (1 file still blobs/*.incomplete: a download under way "
        "or interrupted): copied again"
    )


def test_a_copy_without_refs_main_does_not_match_a_known_revision() -> None:
    hosts = reference_pair()
    cached(hosts, "spark-a", NEW)
    cached(hosts, "spark-b", None)
    assert weights(hosts)["spark-b"].message == (
        f"{MODEL} on spark-b is at no refs/main, the head spark-a's is abc9999: copied again"
    )


def test_a_new_revision_needs_room_for_the_whole_model() -> None:
    hosts = reference_pair()
    cached(hosts, "spark-a", NEW)
    cached(hosts, "spark-b", OLD)
    for disk in hosts["spark-b"].disk.disks:
        disk.available_bytes = 100 * GB  # room for the rest of a copy, not a second one
    found = weights(hosts)
    assert found["spark-b"].severity == "blocker"
    assert found["spark-b"].message == (
        f"{MODEL} on spark-b is at revision abc1234, the head spark-a's is abc9999 and only "
        "100.0 GB is free (needs 130.9 GB)"
    )


def test_without_any_revision_the_size_alone_is_checked_and_said() -> None:
    hosts = reference_pair()
    hosts["spark-a"].hf_cache.models = {MODEL: 119 * GB}
    assert weights(hosts)["spark-a"].message == (
        f"{MODEL} cached on spark-a (119.0 GB, size checked only: no revision read)"
    )
