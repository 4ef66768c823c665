"""The world model as tools see it: what they read from it and the typed facts they hand it.

`WorldStore` stays a Protocol although the agent's world model (agent/world/model.py:WorldModel)
is its one implementation, because that implementation cannot live on this floor: after every
change it computes findings with tools/checks (which reads the types here, so this floor cannot
import it back), renders itself for the model with agent/world/render.py and reports changes
to the transcript (agent/loop/events.py). Tools get it as `ctx.world`. recon applies probe
rounds, docker_ctl hands over the container and image rows it just listed, endpoint_check a
verified endpoint, rollout_step the fabric's measured bandwidth, the jobs its steps run and the
containers they create, world_note the model's beliefs; plan_deployment reads the facts; the job
tools hand over each job they start, read or stop (tools/jobs/world_facts.py). Tools never see
the transcript: the store records its changes.
"""

from __future__ import annotations

from typing import Protocol

from tools.world.facts import Container, HostFacts, Image, ImageContents, Provenance
from tools.world.findings import Finding
from tools.world.jobs import JobFact
from tools.world.measurements import Endpoint, FabricMeasurement
from tools.world.notes import Note


class WorldStore(Protocol):
    hosts: dict[str, HostFacts]
    unreachable: dict[str, str]
    notes: list[Note]
    findings: list[Finding]
    endpoints: dict[str, Endpoint]
    model_size_bytes: int | None
    jobs: dict[str, JobFact]  # by "host/name"
    fabric_tests: dict[str, FabricMeasurement]  # by the host the test ran on

    def apply_round(
        self, facts: dict[str, HostFacts], failures: dict[str, str]
    ) -> list[Finding]: ...

    def stale_hosts(self, names: list[str], max_age_s: float) -> list[str]: ...

    def refresh_docker(
        self,
        host: str,
        containers: list[Container] | None,
        images: list[Image] | None,
        source: Provenance,
    ) -> list[Finding]: ...

    def record_endpoint(self, endpoint: Endpoint) -> None: ...

    def placed(self, facts: dict[str, HostFacts], failures: dict[str, str]) -> list[Finding]:
        """A rollout placed the model: take the hosts' fresh facts and stop judging its fit, as
        one change (never a finding computed on the facts from before it)."""
        ...

    def record_created(self, host: str, container: str, by: str) -> None:
        """Scout created `container` on `host` (`by` says which action): its own work, which
        no finding holds against it (a container of that name is marked on every probe)."""
        ...

    def set_model_size(self, size_bytes: int | None) -> list[Finding]:
        """The model the session is placing, whose fit the findings judge (None: none)."""
        ...

    def record_fabric_test(self, measured: FabricMeasurement) -> None:
        """The fabric's measured bandwidth (its finding, if any, joins the world's findings)."""
        ...

    def record_image_contents(self, host: str, ref: str, contents: ImageContents) -> None:
        """What image `ref` (REPO:TAG) on `host` runs, asked of the image itself; an image pulled
        after recon joins the host's image list."""
        ...

    def record_job(self, fact: JobFact, *, started: bool = False) -> None:
        """What a job tool just saw of one job (`started`: job_start just started it)."""
        ...

    def jobs_unknown(self, host: str, reason: str) -> None:
        """`host` did not answer: its unfinished jobs are in an unknown state."""
        ...

    def add_note(self, belief: str, evidence: str, host: str | None = None) -> Note: ...

    def describe(self, hosts: list[str], new: list[Finding] | None = None) -> str:
        """Compact text for the model: the hosts' facts, notes, endpoints and findings, then
        those of them `new` since the last look; bounded as a whole."""
        ...
