"""The world model as tools see it: what they read from it and the typed facts they hand it.

The agent's world model (agent/world/model.py:WorldModel) is the one implementation; tools get
it as `ctx.world`. recon applies probe rounds, docker_ctl hands over the container and image
rows it just listed, endpoint_check a verified endpoint, rollout_step the fabric's measured
bandwidth, the jobs its steps run and the containers they create, world_note the model's beliefs;
plan_deployment reads the facts; the job tools hand over each job they start, read or stop
(tools/jobs/world_facts.py). Tools never see the transcript: the store records its changes.
"""

from __future__ import annotations

from datetime import datetime
from typing import Protocol

from pydantic import BaseModel

from tools.checks import Finding
from tools.jobs.facts import JobFact
from tools.recon.facts import Container, HostFacts, Image, ImageContents, Provenance


class Note(BaseModel):
    """A belief the model recorded, with the evidence it gave; not a probed fact."""

    belief: str
    evidence: str
    host: str | None = None
    recorded_at: datetime


class Endpoint(BaseModel):
    """A serving endpoint Scout verified, with what it measured there."""

    where: str
    model: str | None = None
    single_stream_tok_s: float | None = None
    ttft_s: float | None = None
    aggregate_tok_s: float | None = None
    concurrency: int | None = None
    checked_at: datetime


class FabricMeasurement(BaseModel):
    """A fabric test Scout ran between nodes (the rollout's all_gather_perf), what it measured,
    and the finding when that is far below the link (tools/deploy/fabric_test.py)."""

    host: str  # where the test ran (the head)
    nodes: list[str]  # the ranks' hosts, as the run printed them
    test: str
    busbw_gb_s: float
    link_gbit: float
    finding: Finding | None = None
    measured_at: datetime


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
