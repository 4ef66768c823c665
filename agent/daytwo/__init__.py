"""Day two: what an operator does with a proven deployment afterwards.

The record itself is the session's (agent/runtime/deployment_record.py: built from the transcript
when a rollout is proven, kept under `~/.scout/deployments/`). Here: `status.py` reads the hosts
and the endpoint against it; `teardown.py` turns it into a plan that removes what Scout started
(and, asked, undoes what it changed); `run_plan.py` proposes such a plan and runs its steps
through the session's gate, approvals and transcript, as any session's calls.
"""
