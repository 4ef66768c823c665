"""The world model: probed facts per host, the model's own notes, and findings over both hosts.

Probed facts and the model's beliefs are kept apart: a note records what the model thinks and
why, and is never mistaken for something a command printed. Facts carry their age so that stale
ones are probed again before a decision rests on them. What Scout created itself (a plan step's
engine container, a docker_ctl run) is remembered by host and name, and marked on each probe of
that host: the engine Scout started and the memory it holds are its work, never a finding.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, Field, PrivateAttr

from tools.checks import Finding, compute_findings
from tools.world.facts import Container, HostFacts, Image, ImageContents, Provenance
from tools.world.jobs import JobFact
from tools.world.measurements import Endpoint, FabricMeasurement
from tools.world.notes import Note

if TYPE_CHECKING:  # a session's transcript and the model's view: `scout recon` needs neither
    from agent.loop.events import WorldUpdate
    from agent.world.job_events import JobListener

DEFAULT_MAX_AGE_S = 600.0
WorldListener = Callable[[str | None, str, list[Finding]], None]


def transcript_listener(emit: Callable[[WorldUpdate], object]) -> WorldListener:
    """A world listener that records each change as a `world_update` event (pass recorder.emit)."""
    from agent.loop.events import WorldUpdate

    def listener(host: str | None, summary: str, new: list[Finding]) -> None:
        emit(WorldUpdate(host=host, summary=summary, findings=[f.model_dump() for f in new]))

    return listener


class WorldModel(BaseModel):
    """Everything Scout knows about the cluster; `model_json_schema()` describes `--json`.

    It is the tools' WorldStore (tools/world/store.py); `on_change` hears of every change.
    """

    hosts: dict[str, HostFacts] = {}
    unreachable: dict[str, str] = {}
    notes: list[Note] = []
    findings: list[Finding] = []
    model_size_bytes: int | None = None
    endpoints: dict[str, Endpoint] = {}
    jobs: dict[str, JobFact] = {}
    fabric_tests: dict[str, FabricMeasurement] = {}
    created: dict[str, dict[str, str]] = Field(
        default={},
        description="Containers Scout created, by host then name: the action that created each.",
    )
    _listener: WorldListener | None = PrivateAttr(default=None)
    _job_listener: JobListener | None = PrivateAttr(default=None)

    def __init__(
        self,
        *,
        on_change: WorldListener | None = None,
        on_job: JobListener | None = None,
        **data: Any,
    ) -> None:
        """`on_change(host, summary, new_findings)` is called after every change of facts,
        `on_job(before, fact, started)` after every job fact (agent/world/job_events.py)."""
        super().__init__(**data)
        self._listener = on_change
        self._job_listener = on_job

    def describe(self, hosts: list[str], new: list[Finding] | None = None) -> str:
        from agent.world.render import render_compact

        return render_compact(self, hosts, new or ())

    def update(self, host: str, facts: HostFacts) -> list[Finding]:
        """Replace a host's facts; returns findings that were not there before."""
        before = self.hosts.get(host)
        self.hosts[host] = _with_known_contents(_with_gpus_before(facts, before), before)
        self.unreachable.pop(host, None)
        return self._refresh(host, f"probed {host}")

    def apply_round(self, facts: dict[str, HostFacts], failures: dict[str, str]) -> list[Finding]:
        """Take a whole probe round at once, so findings are computed over all hosts together."""
        for host, host_facts in facts.items():
            before = self.hosts.get(host)
            self.hosts[host] = _with_known_contents(_with_gpus_before(host_facts, before), before)
            self.unreachable.pop(host, None)
        self.unreachable.update(failures)
        names = ", ".join([*facts, *failures])
        return self._refresh(
            None, f"probed {names}" + (f"; {len(failures)} unreachable" if failures else "")
        )

    def refresh_docker(
        self,
        host: str,
        containers: list[Container] | None,
        images: list[Image] | None,
        source: Provenance,
    ) -> list[Finding]:
        """Take the containers/images a Docker action just listed, keeping known memory use."""
        facts = self.hosts.get(host)
        if facts is None:
            return []
        docker = facts.docker
        if containers is not None:
            held = {c.name: c for c in docker.containers if c.memory_bytes is not None}
            for container in containers:
                previous = held.get(container.name)
                if previous is not None and container.state == previous.state == "running":
                    container.memory_bytes = previous.memory_bytes
                    container.memory_source = previous.memory_source
            docker.containers = containers
        if images is not None:
            docker.images = images
        docker.sources = [*docker.sources, source]
        return self._refresh(host, f"docker on {host} refreshed by {source.command}")

    def record_endpoint(self, endpoint: Endpoint) -> None:
        self.endpoints[endpoint.where] = endpoint
        self._refresh(None, f"endpoint {endpoint.where} verified")

    def record_fabric_test(self, measured: FabricMeasurement) -> None:
        self.fabric_tests[measured.host] = measured
        self._refresh(measured.host, f"fabric measured from {measured.host}")

    def record_image_contents(self, host: str, ref: str, contents: ImageContents) -> None:
        facts = self.hosts.get(host)
        if facts is None:
            return
        repository, _, tag = ref.rpartition(":")
        wanted = (repository, tag)
        listed = facts.docker.images
        image = next((i for i in listed if (i.repository, i.tag or "latest") == wanted), None)
        if image is None:
            image = Image(repository=repository, tag=tag)
            facts.docker.images.append(image)
        image.contents = contents
        self._refresh(host, f"image {ref} on {host} asked what it runs")

    def record_job(self, fact: JobFact, *, started: bool = False) -> None:
        before = self.jobs.get(fact.key)
        self.jobs[fact.key] = fact
        if self._job_listener is not None:
            self._job_listener(before, fact, started)

    def jobs_unknown(self, host: str, reason: str) -> None:
        for fact in [f for f in self.jobs.values() if f.host == host and not f.finished]:
            self.record_job(fact.model_copy(update={"state": "unknown", "why_unknown": reason}))

    def set_model_size(self, size_bytes: int | None) -> list[Finding]:
        self.model_size_bytes = size_bytes
        return self._refresh(None, "model size set")

    def placed(self, facts: dict[str, HostFacts], failures: dict[str, str]) -> list[Finding]:
        """A rollout is complete: the hosts as probed now, the model no longer to be placed.
        One change, so no finding is ever computed on the facts from before the rollout."""
        self.model_size_bytes = None
        return self.apply_round(facts, failures)

    def record_created(self, host: str, container: str, by: str) -> None:
        """Scout created `container` on `host` (`by`: which action); it is Scout's own work."""
        self.created.setdefault(host, {})[container] = by

    def add_note(self, belief: str, evidence: str, host: str | None = None) -> Note:
        note = Note(belief=belief, evidence=evidence, host=host, recorded_at=datetime.now(UTC))
        self.notes.append(note)
        if self._listener is not None:
            self._listener(host, f"note: {belief}", [])
        return note

    def age(self, host: str, now: datetime | None = None) -> float | None:
        """Seconds since `host` was probed, or None if it never was."""
        facts = self.hosts.get(host)
        if facts is None:
            return None
        return ((now or datetime.now(UTC)) - facts.collected_at).total_seconds()

    def is_stale(
        self, host: str, max_age_s: float = DEFAULT_MAX_AGE_S, now: datetime | None = None
    ) -> bool:
        age = self.age(host, now)
        return age is None or age > max_age_s

    def stale_hosts(
        self, names: list[str], max_age_s: float = DEFAULT_MAX_AGE_S, now: datetime | None = None
    ) -> list[str]:
        """Those of `names` to probe again before relying on their facts."""
        return [name for name in names if self.is_stale(name, max_age_s, now)]

    def _refresh(self, host: str | None, summary: str) -> list[Finding]:
        self._mark_created()
        before = {(f.kind, f.message) for f in self.findings}
        measured = [m.finding for m in self.fabric_tests.values() if m.finding is not None]
        self.findings = [*compute_findings(self.hosts, self.model_size_bytes), *measured]
        new = [f for f in self.findings if (f.kind, f.message) not in before]
        if self._listener is not None:
            self._listener(host, summary, new)
        return new

    def _mark_created(self) -> None:
        for host, facts in self.hosts.items():
            own = self.created.get(host, {})
            for container in facts.docker.containers:
                container.started_by_scout = own.get(container.name)


def _with_gpus_before(facts: HostFacts, before: HostFacts | None) -> HostFacts:
    """`facts` remembering the most GPUs an earlier probe saw on the host: one gone since is a
    fault (tools/checks/gpu_health.py), whatever lspci can tell."""
    if before is not None:
        seen = max(len(before.gpu.gpus), before.gpu.gpus_before or 0)
        if seen > len(facts.gpu.gpus) and facts.gpu.sources:
            facts.gpu.gpus_before = seen
    return facts


def _with_known_contents(facts: HostFacts, before: HostFacts | None) -> HostFacts:
    """`facts` with what each image was found to run carried over from `before`: recon cannot
    see it (tools/recon/image_probe.py), and an image with the same ID holds the same files (one
    asked after recon, its ID not yet seen, is known by its name)."""
    if before is None:
        return facts
    asked = [i for i in before.docker.images if i.contents is not None]
    by_id = {i.id: i.contents for i in asked if i.id}
    by_name = {(i.repository, i.tag): i.contents for i in asked if not i.id}
    for image in facts.docker.images:
        if image.contents is None:
            image.contents = by_id.get(image.id) or by_name.get((image.repository, image.tag))
    return facts
