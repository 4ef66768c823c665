"""What an earlier deployment or the host's own guards leave behind that breaks the next one.

From the failures Spark owners report (docs/sources.md §9, "other failures users report"):
- a Ray cluster or placement group still holding every GPU while no engine serves ("Current node
  has no GPU available"; `ray status` reads `16.0/16.0 GPU (16.0 used of 16.0 reserved in
  placement groups)`, tests/fixtures/jobs/ray_status_*);
- the same image tag with different IDs on the nodes (a community start script refuses to start
  then: the engines' versions may differ);
- earlyoom, which kills the largest process when memory runs low: on unified memory that is
  the engine, mid-load or in long-context serving.
"""

from __future__ import annotations

from collections.abc import Mapping

from tools.world.facts import HostFacts
from tools.world.findings import Finding


def leftover_findings(hosts: Mapping[str, HostFacts]) -> list[Finding]:
    findings = [f for name, facts in hosts.items() for f in _ray_holds_gpus(name, facts)]
    findings += _image_skew(hosts)
    findings += [f for name, facts in hosts.items() for f in _earlyoom(name, facts)]
    return findings


def _ray_holds_gpus(name: str, facts: HostFacts) -> list[Finding]:
    services = facts.services
    used, total = services.ray_gpus_used, services.ray_gpus_total
    if not services.ray_running or not used or services.inference_servers:
        return []
    return [
        Finding(
            severity="blocker",
            check="ray",
            kind="ray_holds_gpus",
            hosts=[name],
            message=f"a Ray cluster seen from {name} holds {used:g} of its {total or used:g} GPUs "
            "while no engine serves here: a stale cluster or placement group; a new engine "
            "waits for GPUs that never come",
            fix="stop it on every node (`ray stop`, or stop the container that runs it), then "
            "start the cluster the plan needs",
            evidence=[
                f"{s.host}: {s.command}: GPU {used:g}/{total or used:g}"
                for s in services.sources[-1:]
            ],
        )
    ]


def _image_skew(hosts: Mapping[str, HostFacts]) -> list[Finding]:
    ids: dict[str, dict[str, str]] = {}
    for name, facts in hosts.items():
        for image in facts.docker.images:
            if image.tag and image.id:
                ids.setdefault(f"{image.repository}:{image.tag}", {})[name] = image.id
    findings = []
    for ref, by_host in ids.items():
        if len(set(by_host.values())) < 2:
            continue
        seen = ", ".join(f"{host} {image_id[:19]}" for host, image_id in by_host.items())
        findings.append(
            Finding(
                severity="warning",
                check="docker",
                kind="image_differs",
                hosts=list(by_host),
                message=f"{ref} is not the same image on every node ({seen}): the engines "
                "may differ in version and refuse to talk to each other",
                fix=f"copy the head's {ref} to the others (`docker save {ref} | ssh NODE docker "
                "load`) or pull it again everywhere",
                evidence=[f"{host}: docker images: {ref} {i}" for host, i in by_host.items()],
            )
        )
    return findings


def _earlyoom(name: str, facts: HostFacts) -> list[Finding]:
    if not facts.memory.earlyoom_running:
        return []
    return [
        Finding(
            severity="warning",
            check="memory",
            kind="earlyoom_running",
            hosts=[name],
            message=f"earlyoom runs on {name}: when memory runs low it kills the largest "
            "process, which is the engine (on unified memory, mid-load or in long-context "
            "serving)",
            fix="stop it while serving (`sudo systemctl stop earlyoom`; `disable` keeps it off)",
            evidence=[f"{name}: pgrep -x earlyoom"],
        )
    ]
