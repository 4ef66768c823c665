"""The NCCL a ring of Sparks needs, checked on the engine's image before the plan relies on it.

Three Sparks cabled in NVIDIA's ring share no subnet: each pair has its own, so NCCL must route
by subnet. `NCCL_IB_SUBNET_AWARE_ROUTING` exists only in NCCL 2.30 and later; NVIDIA's
`spark_cluster_setup.py` builds a patched NCCL for the ring, and without it users report
`ibv_modify_qp … 110` (docs/sources.md §9, "NCCL practice"; §2.6 sets
`NCCL_IB_SUBNET_AWARE_ROUTING=1` for ring topologies). The engine uses the NCCL its image's
torch links, so that is the one checked: from the image probe's answer when recon has it
(tools/recon/image_probe.py), else by a step that asks the image before any engine starts.

Nodes that share a cable of their own (two of the three, as the layout chooser prefers) talk
over one subnet and need none of it: the plan says so, since the operator asked for a ring.
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from tools.checks import Finding
from tools.deploy.fabric.paths import FabricError, FabricPath, find_fabric
from tools.deploy.steps import DeployStep, job_log_check
from tools.recon.image_probe import NCCL_CODE
from tools.world.facts import HostFacts

NCCL_CHECK_JOB = "nccl-check"
RING_NCCL = (2, 30)
# `NCCL version 2.30.x` or later, as the probe prints it
RING_NCCL_LINE = r"^NCCL version (2\.([3-9][0-9]|[1-9][0-9]{2,})|[3-9]|[1-9][0-9]+)\."
WHY = (
    "NVIDIA's three-Spark ring needs NCCL 2.30 or later (NCCL_IB_SUBNET_AWARE_ROUTING; "
    "spark_cluster_setup.py builds a patched one), else NCCL fails with `ibv_modify_qp … 110`"
)


@dataclass
class RingNccl:
    """A step that asks the image, a blocker when its NCCL is too old, the plan's line."""

    steps: list[DeployStep] = field(default_factory=list)
    blockers: list[Finding] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)


def ring_nccl(
    hosts: Mapping[str, HostFacts],
    asked: Sequence[str],
    nodes: Sequence[str],
    fabric: Mapping[str, FabricPath],
    image: str,
) -> RingNccl:
    """For the plan's `nodes` (head first) on `fabric`, out of the `asked` hosts."""
    result = RingNccl()
    if not any(p.routed for p in fabric.values()):
        if _asked_a_ring(hosts, asked, nodes):
            result.notes.append(
                f"NCCL: the ring's requirement (NCCL 2.30 or later) does not apply: "
                f"{' and '.join(nodes)} talk over a subnet they share, not through the ring"
            )
        return result
    version = _probed(hosts, nodes, image)
    if version is None:
        head = nodes[0]
        result.steps.append(nccl_check_step(head, image))
        result.notes.append(
            f"NCCL: {image}'s is asked on {head} before any engine starts ({WHY}); every node "
            "runs the head's image"
        )
    elif _parts(version) < RING_NCCL:
        result.blockers.append(
            Finding(
                severity="blocker",
                check="nccl",
                kind="nccl_too_old_for_ring",
                hosts=list(nodes),
                message=f"{', '.join(nodes)} talk over a ring and {image}'s NCCL is {version}: "
                f"{WHY}",
                fix="use an image whose NCCL is 2.30 or later (or NVIDIA's ring build from "
                "spark_cluster_setup.py), or two nodes on a cable of their own",
                evidence=[f"{image}: torch.cuda.nccl.version(): {version}"],
            )
        )
    else:
        result.notes.append(f"NCCL: {image}'s {version} routes by subnet, as the ring needs")
    return result


def nccl_check_step(host: str, image: str) -> DeployStep:
    return DeployStep(
        kind="nccl-check",
        id=f"nccl-check:{host}",
        title=f"ask {image} which NCCL it runs (the ring needs 2.30 or later)",
        host=host,
        actions=[
            f"docker run --rm --network none --entrypoint python3 {shlex.quote(image)} -c "
            f"{shlex.quote(NCCL_CODE)}"
        ],
        check=job_log_check(host, NCCL_CHECK_JOB, "its NCCL is 2.30 or later", RING_NCCL_LINE),
        rollback="none (a throwaway container)",
        job=NCCL_CHECK_JOB,
    )


def _probed(hosts: Mapping[str, HostFacts], nodes: Sequence[str], image: str) -> str | None:
    for node in nodes:
        for found in hosts[node].docker.images:
            ref = f"{found.repository}:{found.tag or 'latest'}"
            if ref == image and found.contents is not None and found.contents.nccl:
                return found.contents.nccl
    return None


def _parts(version: str) -> tuple[int, ...]:
    return tuple(int(p) for p in re.findall(r"\d+", version)[:2])


def _asked_a_ring(
    hosts: Mapping[str, HostFacts], asked: Sequence[str], nodes: Sequence[str]
) -> bool:
    """The operator named more hosts than the plan uses, and those hosts form a ring."""
    named = [h for h in asked if h in hosts]
    if len(named) < 3 or set(named) == set(nodes):
        return False
    try:
        return any(p.routed for p in find_fabric(hosts, named).values())
    except FabricError:
        return False
