"""Multi-node deployment, stage by stage: plan, proof, rollout, launch, fabric (README.md here).

The tools at tools/ root use these parts: plan_deployment (around `plan.planner`: facts and
choices to phases of steps; `plan.facts` gathers what it reads), rollout_step (`rollout`),
endpoint_check (`proof`). The stages import one way, plan first and fabric last, over the
root's `steps`, `choices` and `recipe_book`.
"""
