"""`plan_deployment`: compute a deployment plan from the world model; it changes nothing.

A thin shell of I/O around the planner: gather what it reads (tools/deploy/plan/facts.py), plan
(tools/deploy/plan/planner.py, pure), try the head's ssh into the workers the plan names, render
(tools/deploy/plan/render.py). The steps are kept in the session state under the plan's hash,
so rollout_step can run exactly the plan a person approved.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping

from pydantic import Field

from tools.base import Tool, ToolContext, ToolResult
from tools.deploy.choices import DeployChoices
from tools.deploy.plan import facts as plan_facts
from tools.deploy.plan.evictions import Recorded, eviction_risks
from tools.deploy.plan.facts import Reach
from tools.deploy.plan.planner import Measured, PlanRefusal, plan_deployment
from tools.deploy.plan.render import Answer, render_plan, render_refusal
from tools.deploy.recipe_book.load import RecipeError
from tools.deploy.rollout.state import SessionState
from tools.ssh.pool import SSHPool


class PlanDeploymentInput(DeployChoices):
    model_size_gb: float | None = Field(
        default=None, gt=0, description="Weights in GB if known (else looked up)."
    )
    links_tried: list[str] = Field(
        default_factory=list,
        description="Hosts whose RoCE link stayed down after `ip link set … up`.",
    )
    gated: bool = Field(
        default=False,
        description="The model's Hub repository is gated (its page or API says so): the "
        "download needs HF_TOKEN in Scout's environment.",
    )


class PlanDeploymentTool(Tool[PlanDeploymentInput]):
    name = "plan_deployment"
    description = (
        "Compute a deployment plan, read-only: preflight on the world model (stale hosts "
        "re-probed), the fit check, the fixes the findings need (free memory, a RoCE link up, "
        "a missing image) before the recipe's commands. Returns a Plan for propose_plan."
    )
    Input = PlanDeploymentInput

    def __init__(
        self,
        state: SessionState,
        pool: SSHPool,
        max_age_s: float = 600.0,
        operator_env: Mapping[str, str] | None = None,
        recorded: Callable[[], list[Recorded]] | None = None,
        proof_soak_s: float = 0.0,
    ) -> None:
        """`state`: the session's, which keeps each computed deployment by its plan's hash;
        `pool`: its SSH connections (the tool is only made with an inventory). `operator_env`:
        where HF_TOKEN is looked for (default: Scout's own environment); only its presence is
        read here, the value goes to the download job at run time. `recorded`: the deployments
        Scout recorded, lent by a session that has them; a plan that would end one says so.
        `proof_soak_s`: the soak the plan's proof holds (call.proof_soak_s: 30 min on real
        hosts), the one endpoint_check holds by default in this session."""
        self.state = state
        self.pool = pool
        self.max_age_s = max_age_s
        self.operator_env = os.environ if operator_env is None else operator_env
        self.recorded = recorded
        self.proof_soak_s = proof_soak_s

    def hosts(self, params: PlanDeploymentInput) -> list[str]:
        return list(params.hosts)

    def summary(self, params: PlanDeploymentInput) -> str:
        """What was asked; the result's `meta["summary"]` says what was planned (the recipe
        and hosts the plan chose)."""
        return f"{params.recipe} {params.model} on {', '.join(params.hosts)}"

    async def run(self, params: PlanDeploymentInput, ctx: ToolContext) -> ToolResult:
        if ctx.world is None:
            return ToolResult.error(
                "plan_deployment needs the session's world model, and there is none."
            )
        world = ctx.world
        reach = Reach(self.pool, ctx.web, ctx.report)
        facts = await plan_facts.cluster_facts(
            world, params.hosts, params.links_tried, self.max_age_s, reach
        )
        size, revision = await plan_facts.model_size(
            world, params.model, params.model_size_gb, reach
        )
        choices = DeployChoices.model_validate(
            params.model_dump(exclude={"model_size_gb", "links_tried", "gated"})
        )
        cached = await plan_facts.measured_cache_sizes(choices, reach)
        try:
            given = await plan_facts.given_recipe(choices, reach)
        except RecipeError as exc:
            return _result(render_refusal(PlanRefusal("recipe", problems=(str(exc),))))
        files = await plan_facts.model_files(choices, reach)
        measured = Measured(
            model_size_bytes=size,
            hub_revision=revision,
            cached_bytes=cached,
            given_recipe=given,
            config_shape=files.shape if files else None,
            parsers=(files.parsers, files.source) if files and files.parsers else None,
            gated=params.gated,
            token_present=bool(self.operator_env.get("HF_TOKEN")),
            visible_recipes=plan_facts.recipes_beside(choices),
        )
        deployment = plan_deployment(facts, choices, measured, self.proof_soak_s)
        if isinstance(deployment, PlanRefusal):
            return _result(render_refusal(deployment))
        blockers = await plan_facts.peer_refusals(deployment, reach)
        if self.recorded is not None:
            deployment.plan.risks.extend(eviction_risks(deployment.steps, self.recorded()))
        self.state.add_deployment(deployment.plan, list(deployment.steps))
        return _result(render_plan(deployment, blockers))


def _result(answer: Answer) -> ToolResult:
    meta = {"summary": answer.summary} if answer.summary else {}
    return ToolResult(text=answer.text, is_error=answer.is_error, data=answer.data, meta=meta)
