"""`scout upgrade` as a plan made from the deployment record: fetch, swap, prove, or roll back.

The record holds the rollout's own steps (agent/runtime/deployment_record.py): what fetched the
image and the weights, and what started the engine on each host. An upgrade redoes them with the
new artifacts: the fetch steps first, as jobs, while the old engine still serves (a pull or a
download that fails leaves it serving, untouched); then the old engine goes, the new one starts
with the recorded engine steps rewritten (another image, `--revision`, flags added or dropped),
and the proof runs. The plan names its rollback (`Plan.on_failure`): remove what the upgrade
started, start the recorded engine exactly as it was, prove it again. Approved with its steps,
that rollback is granted with them (tools/plans/approval.py), so a failure needs no second
decision.

Blue/green (the new engine beside the old, traffic moved after its proof) needs both in memory
at once: each engine claims its share of every host's memory (vLLM's --gpu-memory-utilization,
SGLang's --mem-fraction-static), and vLLM refuses to start when its share is not free. Where the
two shares do not fit (two Sparks at 0.8 each), the swap is in place and the plan says so,
with the endpoint's downtime on the step that stops the old engine.
"""

from __future__ import annotations

import re
import uuid
from dataclasses import dataclass, field

from pydantic import BaseModel, Field

from agent.runtime.deployment_record import DeploymentRecord, Started
from tools.deploy.proof.call import proof_step
from tools.deploy.steps import DeployStep, StepCheck
from tools.plans.plan import Plan, PlanStep

ENGINE_KINDS = frozenset({"container", "ray-install", "ray-head", "ray-join", "rank", "serve"})
IMAGE_FETCH = frozenset({"pull", "image-copy"})
WEIGHTS_FETCH = frozenset({"download", "copy"})
ENGINE_COMMAND = re.compile(r"\b(vllm serve|sglang\.launch_server)\b")
SHARE = re.compile(r"--(?:gpu-memory-utilization|mem-fraction-static)[ =]([0-9.]+)")
DEFAULT_SHARE = 0.9  # vLLM's default --gpu-memory-utilization
BOTH_FIT = 0.95  # the two shares, and what the system itself holds, within one host's memory
_RUN_TAG = re.compile(r"-(?:up|rb)[0-9a-f]{6}$")
NEXT = "-next"  # the name of an engine started beside another (blue/green)


class UpgradeRequest(BaseModel):
    """What changes: another image, a model revision, flags added or dropped (any of them)."""

    image: str | None = None
    revision: str | None = None
    add_flags: list[str] = Field(default_factory=list)
    drop_flags: list[str] = Field(default_factory=list)

    def describe(self) -> str:
        parts = [f"image {self.image}"] if self.image else []
        parts += [f"revision {self.revision}"] if self.revision else []
        parts += [f"adding {' '.join(self.add_flags)}"] if self.add_flags else []
        parts += [f"dropping {' '.join(self.drop_flags)}"] if self.drop_flags else []
        return ", ".join(parts) or "nothing"


class UpgradeRefused(ValueError):
    """The record cannot be upgraded as asked (one line, for the operator)."""


@dataclass
class Upgrade:
    """The upgrade in the order it runs (steps, and a PlanStep where the new endpoint is
    proven before the old one goes), its rollback (clear what it started, restore the recorded
    engine where it is gone), and the plan a person approves once."""

    record: DeploymentRecord
    request: UpgradeRequest
    tag: str
    forward: list[DeployStep | PlanStep]
    clear: list[DeployStep]
    restore: list[DeployStep]
    layout: str
    plan: Plan
    port: int
    started: list[Started]
    new_steps: list[DeployStep] = field(default_factory=list)

    @property
    def back(self) -> list[DeployStep]:
        return self.clear + self.restore

    @property
    def fetch(self) -> list[DeployStep]:
        kinds = IMAGE_FETCH | WEIGHTS_FETCH
        return [s for s in self.forward if isinstance(s, DeployStep) and s.kind in kinds]

    @property
    def engine(self) -> list[DeployStep]:
        """The new engine's steps (what the swap starts)."""
        return [s for s in self.forward if isinstance(s, DeployStep) and s.kind in ENGINE_KINDS]


def upgrade_plan(
    record: DeploymentRecord,
    request: UpgradeRequest,
    *,
    others: list[DeploymentRecord] | None = None,
    soak_s: float = 60.0,
    tag: str | None = None,
) -> Upgrade:
    """The plan that moves `record` to what `request` asks, with its rollback named."""
    if not record.steps:
        raise UpgradeRefused(
            f"the record {record.id} holds no rollout steps (recorded before upgrades could "
            "read them): deploy it again with `scout run`, then upgrade"
        )
    if request.describe() == "nothing":
        raise UpgradeRefused("nothing to upgrade: give --image, --revision, --flag or --drop-flag")
    tag = tag or uuid.uuid4().hex[:6]
    recorded = [DeployStep.model_validate(s) for s in record.steps]
    old_image = str(record.fingerprint.get("image") or "")
    if request.image and not old_image:
        raise UpgradeRefused(f"the record {record.id} does not name the image it was proven with")
    engine = [s for s in recorded if s.kind in ENGINE_KINDS]
    if not any(ENGINE_COMMAND.search(a) for s in engine for a in s.actions):
        raise UpgradeRefused(f"the record {record.id} holds no engine command to upgrade")
    kinds = IMAGE_FETCH if request.image else frozenset()
    kinds |= WEIGHTS_FETCH if request.revision else frozenset()
    fetch = [_rewritten(s, request, old_image, f"up{tag}") for s in recorded if s.kind in kinds]
    new_engine = [_rewritten(s, request, old_image, f"up{tag}") for s in engine]
    beside, layout = _layout(engine, new_engine, record)
    old_proof = proof_step(record.host, record.port, record.model)
    retire = [_remove(record, s.host, s.container, "retire") for s in _serving_first(record)]
    restore = [_retagged(s, f"rb{tag}") for s in engine]
    port, started = record.port, list(record.started)
    if beside:  # blue/green: the new engine under other names and ports, proven, then the move
        names = {s.container: _other_name(s.container) for s in record.started}
        shift = -1 if any(s.container.endswith(NEXT) for s in record.started) else 1
        new_engine = [_moved(s, names, record.port, shift) for s in new_engine]
        port = record.port + shift
        started = [s.model_copy(update={"container": names[s.container]}) for s in started]
        clear = [
            _remove(record, s.host, names[s.container], "rollback") for s in _serving_first(record)
        ]
        restore = [_remove(record, s.host, s.container, "rollback") for s in _serving_first(record)]
        restore += [_retagged(s, f"rb{tag}") for s in engine]
        new_proof = proof_step(record.host, port, record.model)
        forward: list[DeployStep | PlanStep] = [*fetch, *new_engine, new_proof, *retire]
        final_proof = None
    else:
        clear = [_remove(record, s.host, s.container, "rollback") for s in _serving_first(record)]
        forward = [*fetch, *retire, *new_engine]
        final_proof = old_proof
    risks = [layout, _soak_words(record, soak_s)]
    risks += record.evictions(others or [])
    back = clear + restore
    plan = Plan(
        goal=f"upgrade {record.model} at {record.endpoint} (deployment {record.id}): "
        + request.describe(),
        steps=[s if isinstance(s, PlanStep) else s.plan_step() for s in forward],
        proof=final_proof,
        on_failure=[s.plan_step() for s in back] + [old_proof],
        risks=risks,
    )
    kept = [s for s in recorded if s.kind not in kinds | ENGINE_KINDS]
    return Upgrade(
        record=record,
        request=request,
        tag=tag,
        forward=forward,
        clear=clear,
        restore=restore,
        layout=layout,
        plan=plan,
        port=port,
        started=started,
        new_steps=kept + fetch + new_engine,
    )


def _serving_first(record: DeploymentRecord) -> list:
    return sorted(record.started, key=lambda s: s.host != record.host)


def _remove(record: DeploymentRecord, host: str, container: str, why: str) -> DeployStep:
    gone = StepCheck(
        host=host,
        command="docker ps -a --format '{{.Names}}'",
        expect=f"^{re.escape(container)}$",
        absent=True,
        description=f"no container named {container}",
    )
    if why == "retire":
        return DeployStep(
            kind="stop",
            id=f"retire:{host}",
            title=f"stop and remove the old engine {container} on {host}",
            host=host,
            actions=[f"docker rm -f {container}"],
            check=gone,
            rollback="the rollback below starts the recorded engine again",
            expected_downtime=f"{record.endpoint} stops serving until the new engine is proven "
            "(or the old one is back)",
        )
    return DeployStep(
        kind="stop",
        id=f"rollback-remove:{host}",
        title=f"remove what the upgrade started on {host} ({container})",
        host=host,
        actions=[f"docker rm -f {container}"],
        check=gone,
        rollback="none: the recorded engine starts next",
        expected_downtime=f"{record.endpoint} is down until the recorded engine is proven again",
    )


def _rewritten(step: DeployStep, request: UpgradeRequest, old_image: str, run: str) -> DeployStep:
    """The recorded step with the request's artifacts and flags, its job renamed for this run."""
    actions = list(step.actions)
    check = step.check.model_copy()
    if request.image:
        actions = [a.replace(old_image, request.image) for a in actions]
        check.command = check.command.replace(old_image, request.image)
        if check.expect:
            check.expect = check.expect.replace(re.escape(old_image), re.escape(request.image))
        check.description = check.description.replace(old_image, request.image)
    actions = [_engine_flags(a, request) if ENGINE_COMMAND.search(a) else a for a in actions]
    if request.revision and step.kind == "download":
        actions = [f"{a} --revision {request.revision}" for a in actions]
    title = step.title.replace(old_image, request.image) if request.image else step.title
    moved = step.model_copy(update={"actions": actions, "check": check, "title": title})
    return _retagged(moved, run)


def _engine_flags(action: str, request: UpgradeRequest) -> str:
    words = action.split(" ")
    for flag in request.drop_flags:
        if flag in words:
            at = words.index(flag)
            takes_value = at + 1 < len(words) and not words[at + 1].startswith("--")
            del words[at : at + (2 if takes_value else 1)]
    added = list(request.add_flags)
    if request.revision:
        added += ["--revision", request.revision]
    return " ".join(words + added)


def _retagged(step: DeployStep, run: str) -> DeployStep:
    """The step with its job named for this run (a job name is unique per host, and the
    recorded one's folder stays), and its check reading that job's log."""
    if not step.job:
        return step.model_copy()
    base = _RUN_TAG.sub("", step.job)
    job = f"{base}-{run}"
    check = step.check.model_copy(
        update={"command": step.check.command.replace(f'/{step.job}"', f'/{job}"')}
    )
    return step.model_copy(update={"job": job, "check": check})


def _share(steps: list[DeployStep]) -> float:
    found = [float(m[1]) for s in steps for a in s.actions for m in SHARE.finditer(a)]
    return max(found, default=DEFAULT_SHARE)


def _layout(
    old: list[DeployStep], new: list[DeployStep], record: DeploymentRecord
) -> tuple[bool, str]:
    """Blue/green when both engines' memory shares fit on every host at once (and no Ray
    cluster, one per host, is part of it), else in place; with the words the plan says."""
    before, after = _share(old), _share(new)
    hosts = ", ".join(record.hosts())
    if before + after <= BOTH_FIT and not any(s.kind.startswith("ray") for s in old):
        return True, (
            f"blue/green: the old engine holds {before:g} and the new one needs {after:g} of "
            f"each host's memory ({hosts}), so the new one starts beside it on port "
            f"{record.port + 1 if not _is_next(record) else record.port - 1}; the old one "
            "serves until the new one is proven, then it goes and the endpoint moves there"
        )
    return False, (
        f"in place, not blue/green: the old engine holds {before:g} and the new one needs "
        f"{after:g} of each host's memory ({hosts}), more than one host holds together; "
        f"{record.endpoint} is down from the old engine's removal until the new one is proven "
        "(or, if it fails, the old one is proven again)"
    )


def _is_next(record: DeploymentRecord) -> bool:
    return any(s.container.endswith(NEXT) for s in record.started)


def _other_name(container: str) -> str:
    """Blue/green alternates two names: `scout-vllm` and `scout-vllm-next`."""
    return container.removesuffix(NEXT) if container.endswith(NEXT) else container + NEXT


def _moved(step: DeployStep, names: dict[str, str], port: int, shift: int) -> DeployStep:
    """The step for the engine beside: its containers renamed, its API port and (multi-node)
    its rendezvous port moved by `shift`, so the two engines share no name and no port."""

    def move(text: str) -> str:
        for old, new in names.items():
            text = re.sub(rf"(?<![\w.-]){re.escape(old)}(?![\w.-])", new, text)
        text = re.sub(rf"(--port |localhost:|port ){port}\b", rf"\g<1>{port + shift}", text)
        return re.sub(r"--master-port (\d+)", lambda m: f"--master-port {int(m[1]) + shift}", text)

    check = step.check.model_copy(
        update={
            "command": move(step.check.command),
            "expect": move(step.check.expect) if step.check.expect else None,
            "description": move(step.check.description),
        }
    )
    return step.model_copy(
        update={
            "title": move(step.title),
            "actions": [move(a) for a in step.actions],
            "check": check,
            "rollback": move(step.rollback),
            "creates": move(step.creates) if step.creates else None,
        }
    )


def _soak_words(record: DeploymentRecord, soak_s: float) -> str:
    return (
        f"after the proof, a soak of {soak_s:g} s, then one real generation at "
        f"{record.endpoint}: a failure there rolls back too"
    )
