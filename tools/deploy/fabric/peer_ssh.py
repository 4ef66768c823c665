"""Before a plan leans on it: does the head get into each worker over ssh, without a prompt?

The head's own ssh carries what the plan sends between nodes: the image copy (`docker save |
ssh`), the weights' rsync, the fabric test's mpirun, the lookups of a worker's fabric address.
Each runs in a job, with nobody to answer a prompt. NVIDIA's connect-two-sparks playbook checks
its passwordless setup with `ssh <ip> hostname` both ways (docs/sources.md §2.1 step 4); Scout runs
the head's half of that, non-interactive (BatchMode turns a prompt into a failure), for every
worker address the plan's commands name. It only prints a name: it changes nothing.
"""

from __future__ import annotations

import asyncio
import re
import shlex
from collections.abc import Iterable, Mapping

from tools.checks import Finding
from tools.deploy.steps import DeployStep
from tools.ssh.errors import SSHError
from tools.ssh.pool import SSHPool


def probe_command(address: str) -> str:
    return f"ssh -o BatchMode=yes -o ConnectTimeout=10 {shlex.quote(address)} hostname"


def addresses_used(
    steps: Iterable[DeployStep], head: str, candidates: Mapping[str, Iterable[str]]
) -> dict[str, list[str]]:
    """Per worker, which of its `candidates` (fabric and management addresses) the head's
    steps name in their commands."""
    said = "\n".join(a for s in steps if s.host == head for a in s.actions)
    used: dict[str, list[str]] = {}
    for worker, addresses in candidates.items():
        for address in dict.fromkeys(a for a in addresses if a):
            if re.search(rf"(?<![\w.-]){re.escape(address)}(?![\w.-])", said):
                used.setdefault(worker, []).append(address)
    return used


async def peer_ssh_findings(
    pool: SSHPool, head: str, targets: Mapping[str, list[str]]
) -> list[Finding]:
    """A blocker per worker address the head's ssh cannot log in to (all probed at once)."""
    pairs = [(worker, address) for worker, addresses in targets.items() for address in addresses]

    async def one(worker: str, address: str) -> Finding | None:
        try:
            result = await pool.run(head, probe_command(address), timeout=30)
        except SSHError:
            return None  # the head itself did not answer: preflight reports that host
        if result.exit_status == 0:
            return None
        lines = [line for line in (result.stderr + result.stdout).splitlines() if line.strip()]
        return _refusal(head, worker, address, lines[-1].strip() if lines else "no output")

    found = await asyncio.gather(*(one(w, a) for w, a in pairs))
    return [f for f in found if f is not None]


def _refusal(head: str, worker: str, address: str, said: str) -> Finding:
    what = f"`ssh {address} hostname` on {head} fails ({said})"
    needs = "the plan's copies and fabric test run from there over ssh, in jobs that cannot prompt"
    if "Host key verification failed" in said:
        kind = "peer_host_key_unknown"
        fix = (
            f"on {head}, as the account Scout uses, accept {worker}'s host key under {address} "
            f"once (`ssh {address} hostname`), after comparing its fingerprint with "
            f"`ssh-keygen -lf /etc/ssh/ssh_host_ed25519_key.pub` on {worker}"
        )
    elif "Permission denied" in said:
        kind = "peer_key_not_authorized"
        fix = (
            f"set up passwordless SSH from {head} to {worker} as NVIDIA's connect-two-sparks "
            f"playbook does (`discover-sparks`, or `ssh-copy-id {address}`), then check with "
            f"`ssh {address} hostname` on {head}"
        )
    else:
        kind = "peer_ssh_failed"
        fix = f"check that {worker} runs sshd and answers at {address}"
    return Finding(
        severity="blocker",
        check="peer_ssh",
        kind=kind,
        hosts=[head, worker],
        message=f"{what}: {needs}",
        fix=fix,
        needs_person=True,
        evidence=[said],
    )
