"""Docker on each host: installed, usable by this user, its daemon reachable."""

from __future__ import annotations

from collections.abc import Mapping

from tools.world.facts import HostFacts
from tools.world.findings import Finding

CHECK = "docker"


def docker_findings(hosts: Mapping[str, HostFacts]) -> list[Finding]:
    """A blocker for each host where docker cannot be used, with the command that fixes it."""
    findings = []
    for name, facts in hosts.items():
        docker = facts.docker
        if docker.installed is False:
            findings.append(
                Finding(
                    severity="blocker",
                    check=CHECK,
                    kind="docker_missing",
                    hosts=[name],
                    message=f"docker is not installed on {name}",
                    fix="install Docker CE and the NVIDIA container toolkit",
                    evidence=[docker.problem or ""],
                )
            )
        elif docker.permission_denied:
            findings.append(
                Finding(
                    severity="blocker",
                    check=CHECK,
                    kind="docker_permission_denied",
                    hosts=[name],
                    message=f"docker on {name} refuses the user (permission denied on the socket)",
                    fix="add the user to the docker group (`sudo usermod -aG docker $USER`, "
                    "then log in again)",
                    evidence=[docker.problem or "", f"groups: {' '.join(docker.user_groups)}"],
                )
            )
        elif docker.installed and docker.usable is False:
            findings.append(
                Finding(
                    severity="blocker",
                    check=CHECK,
                    kind="docker_unusable",
                    hosts=[name],
                    message=f"docker on {name} cannot reach its daemon",
                    fix="start it (`sudo systemctl start docker`) and check `docker info`",
                    evidence=[docker.problem or ""],
                )
            )
    return findings
