"""One tag, two builds: nodes whose copy of the plan's image has another ID than the head's.

Engines of two builds may refuse each other (a community start script refuses to start then;
docs/sources.md §9, "other failures users report": different image digests on the nodes).
The head's copy is the one the plan runs, so provisioning copies it to the others
(tools/deploy/plan/provision.py); when the head has none to compare with, the plan stops and says
why.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from tools.checks import Finding
from tools.world.facts import HostFacts


def image_ids(hosts: Mapping[str, HostFacts], nodes: Sequence[str], wanted: str) -> dict[str, str]:
    """Node → the ID recon saw for `wanted` (REPO:TAG), where it has the image and an ID."""
    ids = {}
    for node in nodes:
        for image in hosts[node].docker.images:
            if f"{image.repository}:{image.tag or 'latest'}" == wanted and image.id:
                ids[node] = image.id
    return ids


def skewed_nodes(
    hosts: Mapping[str, HostFacts], nodes: Sequence[str], head: str, wanted: str
) -> tuple[dict[str, str], Finding | None]:
    """Nodes (→ their ID) whose `wanted` differs from the head's; or a blocker when the nodes
    disagree and the head has no copy to give them."""
    ids = image_ids(hosts, nodes, wanted)
    head_id = ids.get(head)
    if head_id is not None:
        return {h: i for h, i in ids.items() if i != head_id}, None
    if len(set(ids.values())) < 2:
        return {}, None
    seen = ", ".join(f"{h} {i[:12]}" for h, i in ids.items())
    return {}, Finding(
        severity="blocker",
        check="docker",
        kind="image_differs_no_head_copy",
        hosts=list(ids),
        message=f"{wanted} is not the same image on every node ({seen}) and {head} (the head) "
        "has no copy to give them all",
        fix=f"pull {wanted} on {head}, then plan again (the plan copies the head's image to "
        "the others)",
    )
