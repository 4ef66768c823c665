"""Multi-node deployment: recipes that turn facts and choices into commands, and their checks.

The tools stand at tools/ root and use these parts: plan_deployment (`plan_tool`, moving to the
root), rollout_step (tools/rollout_step.py), endpoint_check (tools/endpoint_check.py). Recipes,
the fit check, preflight and `fixes` only compute; `rollout` and `state` (the session's plans,
computed deployments and rollouts) hold where a deployment stands; `endpoint` only reads a
served endpoint.
"""
