"""The steps that clear what preflight found, before the recipe's own: stop a container holding
memory, bring a RoCE link up, give the fabric ports addresses (netplan), or say what a person
must do by hand (images and weights: tools/deploy/plan/provision.py)."""

from __future__ import annotations

from tools.checks import Finding
from tools.deploy.choices import DeployChoices
from tools.deploy.fabric.netplan import netplan_step
from tools.deploy.fabric.paths import FabricPath
from tools.deploy.plan.preflight import PreflightReport
from tools.deploy.steps import DeployStep, StepCheck


def fix_steps(
    report: PreflightReport, choices: DeployChoices
) -> tuple[list[DeployStep], list[Finding]]:
    """Steps that clear the blockers Scout can clear remotely, and the blockers it cannot."""
    steps: list[DeployStep] = []
    unresolved: list[Finding] = []
    holders = report.fit.blocking_containers if report.fit else {}
    stopped = {name for names in holders.values() for name in names}
    for check in report.blockers:
        if check.check == "memory" and holders:
            steps += [
                stop_container_step(h, name) for h, names in holders.items() for name in names
            ]
        elif check.check == "fabric" and not check.needs_person and report.fabric:
            steps += [link_up_step(p) for p in report.fabric.values() if not p.link_up]
        elif check.check == "ports" and any(name in check.message for name in stopped):
            continue
        else:
            unresolved.append(check)
            if check.needs_person:
                steps.append(by_hand_step(check))
    for path in (report.fabric or {}).values():
        if path.netplan:
            steps.append(netplan_step(path.host, dict(path.netplan)))
    kinds = ["stop", "link-up", "netplan", "by-hand"]
    steps.sort(key=lambda s: kinds.index(s.kind))
    return steps, unresolved


def stop_container_step(host: str, name: str) -> DeployStep:
    return DeployStep(
        kind="stop",
        id=f"stop:{host}:{name}",
        title=f"stop {name} to free its memory",
        host=host,
        actions=[f"docker stop {name}"],
        check=StepCheck(
            host=host,
            command="docker ps --format '{{.Names}}'",
            expect=rf"^{name}$",
            absent=True,
            description=f"{name} is no longer running",
        ),
        rollback=f"docker start {name}",
        expected_downtime=f"whatever {name} serves stops until it is started again",
    )


def link_up_step(path: FabricPath) -> DeployStep:
    netdevs = path.down_netdevs or (path.netdev,)
    hca = path.hcas[0] if path.hcas else None
    expect = rf"==> {path.netdev} \(Up\)" if hca else None
    return DeployStep(
        kind="link-up",
        id=f"link-up:{path.host}",
        title=f"bring the RoCE link up ({', '.join(netdevs)})",
        host=path.host,
        actions=[f"sudo ip link set {n} up" for n in netdevs],
        check=StepCheck(
            host=path.host,
            command="ibdev2netdev",
            expect=expect,
            description=f"ibdev2netdev shows {path.netdev} (Up); if it stays Down, reseat the "
            "cable in the same cage on both ends (needs a person)",
        ),
        rollback=" && ".join(f"sudo ip link set {n} down" for n in netdevs),
    )


def by_hand_step(check: Finding) -> DeployStep:
    host = check.hosts[0] if check.hosts else ""
    return DeployStep(
        kind="by-hand",
        id=f"by-hand:{check.check}:{host}",
        title=f"by hand: {check.fix or check.message}",
        host=host,
        actions=[f"(a person) {check.fix or check.message}"],
        check=StepCheck(
            host=host,
            command="ibdev2netdev",
            expect=r"\(Up\)",
            description="a ConnectX port shows (Up)",
        ),
        rollback="none (physical change)",
        by_hand=True,
    )
