"""Multi-node deployment: recipes that turn facts and choices into commands, and their checks.

The tools: `plan_tool` (plan_deployment), `rollout_tool` (rollout_step), `endpoint_tool`
(endpoint_check). The planner (`planner`: facts and choices to phases of steps), recipes, the
fit check, preflight and `fixes` only compute; rollout_step runs the approved steps through the
gate, and `endpoint` only reads a served endpoint.
"""
