"""Multi-node deployment: recipes that turn facts and choices into commands, and their checks.

The tools stand at tools/ root and use these parts: plan_deployment (tools/plan_deployment.py,
around the pure `planner`: facts and choices to phases of steps; `plan_facts` gathers what it
reads), rollout_step (tools/rollout_step.py), endpoint_check (tools/endpoint_check.py). Recipes,
the fit check, preflight and `fixes` only compute; `rollout` and `state` (the session's plans,
computed deployments and rollouts) hold where a deployment stands; `endpoint` only reads a
served endpoint.
"""
