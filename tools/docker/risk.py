"""How risky a docker_ctl call is: its action, every flag that reaches the host, what it runs.

The action sets the floor (listing reads, `run` changes, `rm` destroys). Flags that hand the host
to the container are destructive: `--privileged`, `--pid host`, `--cap-add`, unconfined security
profiles, and any mount or device beyond the allow-list of `host_access` (named volumes, the HF
cache, model folders, the GPUs and RDMA devices). The command `exec` or `run` would start is
judged by the shell judge, with the call's environment. The same mount and flag checks serve the
shell classifier's `docker run`.
"""

from __future__ import annotations

import shlex
from collections.abc import Iterable

from tools.docker.host_access import device_problem, mount_problem
from tools.docker.params import DockerCtlInput
from tools.risk.assessment import Risk, RiskAssessment
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


def run_flag_problems(
    *,
    privileged: bool = False,
    volumes: Iterable[str] = (),
    devices: Iterable[str] = (),
    pid: str | None = None,
    userns: str | None = None,
    cap_add: Iterable[str] = (),
    security_opt: Iterable[str] = (),
) -> list[str]:
    """Every flag of a `docker run` that hands the host to the container, as reasons."""
    problems = ["--privileged gives the container every host privilege"] if privileged else []
    if pid == "host":
        problems.append("--pid host shares the host's processes")
    if userns == "host":
        problems.append("--userns host turns off user-namespace isolation")
    problems += [f"--cap-add {cap} grants a host capability" for cap in cap_add]
    for option in security_opt:
        if "unconfined" in option or "disable" in option:
            problems.append(f"--security-opt {option} turns a protection off")
    problems += [p for spec in volumes if (p := mount_problem(spec))]
    problems += [p for device in devices if (p := device_problem(device))]
    return problems


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
