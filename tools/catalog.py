"""Every tool Scout builds a session from, as classes: what rules may name.

The rules in a settings file are read against these, whatever tools one session has (a session
without an inventory has no ssh_exec, yet its rules for ssh_exec are still rules Scout knows), so
a rule naming a tool or a field Scout does not have is refused, never kept as a rule that quietly
matches nothing (a deny rule that matches nothing lets the call through). The session builder
makes exactly these (tests/unit/test_rule_vocabulary.py).
"""

from __future__ import annotations

from tools.base import Tool
from tools.deployment_status import DeploymentStatusTool
from tools.docker_ctl import DockerCtl
from tools.endpoint_check import EndpointCheckTool
from tools.job_logs import JobLogs
from tools.job_start import JobStart
from tools.job_status import JobStatus
from tools.job_stop import JobStop
from tools.job_wait import JobWait
from tools.plan_deployment import PlanDeploymentTool
from tools.propose_plan import ProposePlanTool
from tools.recall import RecallResultTool
from tools.recon_tool import ReconTool
from tools.rollout_step import RolloutStepTool
from tools.ssh_exec import SSHExec
from tools.todo import TodoWriteTool
from tools.web_fetch import WebFetchTool
from tools.world_note import WorldNoteTool

SCOUT_TOOLS: tuple[type[Tool], ...] = (
    SSHExec,
    DockerCtl,
    ReconTool,
    PlanDeploymentTool,
    RolloutStepTool,
    EndpointCheckTool,
    DeploymentStatusTool,
    JobStart,
    JobStatus,
    JobWait,
    JobLogs,
    JobStop,
    WorldNoteTool,
    WebFetchTool,
    ProposePlanTool,
    TodoWriteTool,
    RecallResultTool,
)
