"""A deployment step as data: where it runs, its commands, how success shows, how to undo it.

Long work (pulls, downloads, copies, fabric tests, the engine itself) is a job: its action runs
detached with its log on the host (tools/jobs/), and its checks read that log."""

from __future__ import annotations

import re
from typing import Literal

from pydantic import BaseModel, Field

from tools.jobs.folder import job_dir
from tools.plans.plan import PlanStep


class StepCheck(BaseModel):
    """A read-only command whose output proves a step worked."""

    host: str
    command: str
    expect: str | None = Field(default=None, description="Regex the output must (not) match.")
    absent: bool = Field(default=False, description="Pass when `expect` is NOT found.")
    description: str

    def passes(self, exit_status: int | None, output: str) -> bool:
        if exit_status != 0:
            return False
        if self.expect is None:
            return True
        return (re.search(self.expect, output, re.M) is None) == self.absent

    def render(self) -> str:
        return f"on {self.host}: `{self.command}` → {self.description}"


StepKind = Literal[
    "stop", "link-up", "netplan", "by-hand", "pull", "download", "image-build", "image-copy",
    "image-check",
    "copy", "fabric-test", "container", "ray-install", "ray-head", "ray-join", "rank", "serve",
    "drop-cache", "stop-earlyoom", "nccl-check",
]  # fmt: skip


class DeployStep(BaseModel):
    """One gated step on one host; `needs` names steps that must have succeeded first. `kind`
    says what the step does (code reads it, never the id's spelling); `id` names it in `needs`."""

    kind: StepKind
    id: str
    title: str
    host: str
    actions: list[str] = Field(min_length=1)
    check: StepCheck
    rollback: str
    expected_downtime: str = "none"
    needs: list[str] = Field(default_factory=list)
    by_hand: bool = Field(default=False, description="A person must do it; Scout cannot.")
    job: str | None = Field(
        default=None,
        description="Run the one action as this named job (job_start): it outlives the call "
        "and its log shows progress; the step's work is done when the job ends (or `ready`).",
    )
    ready: str | None = Field(
        default=None, description="`grep -E` pattern in the job's log that means it is ready."
    )
    wait: bool = Field(
        default=True,
        description="Wait for the job to end (or be `ready`); False: a job that runs on (an "
        "engine rank waiting for rank 0) is started and its check reads its log at once.",
    )
    creates: str | None = Field(
        default=None,
        description="The container this step creates on its host: once the step has passed, "
        "it is Scout's own (tools/world/store.py:record_created).",
    )
    operator_env: list[str] = Field(
        default_factory=list,
        description="Variables the job takes from the operator's environment at run time "
        "(HF_TOKEN); their values are never in the plan.",
    )

    def plan_step(self) -> PlanStep:
        """The step as a person approves it in a plan: what, where, how, undo, proof."""
        title = self.title
        if self.job:
            title += f" (as job {self.job}"
            if self.operator_env:
                title += f", with {', '.join(self.operator_env)} from the operator's environment"
            title += ")"
        return PlanStep(
            title=title,
            hosts=[self.host] if self.host else [],
            actions=self.actions,
            expected_downtime=self.expected_downtime,
            rollback=self.rollback,
            success_check=self.check.render(),
        )


def job_log_check(
    host: str, job: str, description: str, expect: str | None = None, *, absent: bool = False
) -> StepCheck:
    """A check on the job's own log (not `docker logs`: an engine started with `docker exec`
    writes there, while `docker logs` shows only the container's main process)."""
    return StepCheck(
        host=host,
        command=f"tail -n 200 {job_dir(job)}/log",
        expect=expect,
        absent=absent,
        description=description,
    )
