"""How risky a docker_ctl call is: its action, every flag that reaches the host, what it runs.

The action sets the floor (listing reads, `run` changes, `rm` destroys). Flags that hand the host
to the container are destructive: `--privileged`, `--pid host`, `--cap-add`, unconfined security
profiles, and any mount or device beyond the allow-list (tools/risk/container_access.py: named
volumes, the HF cache, model folders, the GPUs and RDMA devices). The command `exec` or `run`
would start is judged by the shell judge, with the call's environment.
"""

from __future__ import annotations

import shlex

from tools.docker.params import DockerCtlInput
from tools.risk.assessment import Risk, RiskAssessment
from tools.risk.container_access import run_flag_problems
from tools.risk.shell_judge import ShellJudge

ACTION_RISK: dict[str, Risk] = {
    "ps": Risk.READ_ONLY,
    "images": Risk.READ_ONLY,
    "inspect": Risk.READ_ONLY,
    "logs": Risk.READ_ONLY,
    "stats": Risk.READ_ONLY,
    "pull": Risk.MUTATING,
    "run": Risk.MUTATING,
    "exec": Risk.MUTATING,
    "start": Risk.MUTATING,
    "restart": Risk.MUTATING,
    "stop": Risk.DESTRUCTIVE,
    "rm": Risk.DESTRUCTIVE,
    "rmi": Risk.DESTRUCTIVE,
}


def docker_call_risk(params: DockerCtlInput, judge: ShellJudge) -> RiskAssessment:
    """The whole call: the action, its flags, and the command it runs (by the shell judge)."""
    floor = ACTION_RISK[params.action]
    found = RiskAssessment(floor, f"docker {params.action} is {floor.label}")
    if params.action == "run":
        problems = run_flag_problems(
            privileged=params.privileged,
            volumes=params.volumes or (),
            devices=params.devices or (),
        )
        if problems:
            return RiskAssessment(Risk.DESTRUCTIVE, f"docker run: {'; '.join(problems)}")
    if params.action in ("run", "exec") and (params.command or params.entrypoint):
        argv = [params.entrypoint] if params.entrypoint else []
        argv += params.argv()
        inner = judge(shlex.join(argv), env=params.env, cwd=params.workdir)
        if inner.risk >= found.risk:
            where = params.container or params.image
            return RiskAssessment(inner.risk, f"{inner.reason} (inside docker {params.action} "
                                              f"{where})")  # fmt: skip
    elif params.env:
        inner = judge("true", env=params.env)
        if inner.risk > found.risk:
            return inner
    return found
