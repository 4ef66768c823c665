"""Steps for what a host itself does to an engine, run right before the engine starts.

- Page cache on unified memory (GB10): vLLM's start check sees about MemFree, so a cache left by
  an earlier load or a download fails the start ("Free memory on device … less than desired GPU
  memory utilization"). NVIDIA's vLLM playbook (troubleshooting, UMA note) and vLLM issue #48140
  drop the cache first: `sync; echo 3 | sudo tee /proc/sys/vm/drop_caches`. The step comes after
  the downloads and copies (they fill the cache again) and before any engine step.
- earlyoom kills the largest process when memory runs low: on unified memory that is the engine.
  Spark owners stop it before serving (docs/sources.md §9, "other failures users report":
  "disable it first"). The step stops it for the serving session only (`systemctl stop`, not
  `disable`), and its rollback starts it again, so the host's guard is not lost for good.
"""

from __future__ import annotations

from tools.checks import Finding
from tools.deploy.steps import DeployStep, StepCheck

DROP_CACHES = "sync; echo 3 | sudo tee /proc/sys/vm/drop_caches"
# `Cached:` below 10,000,000 kB: under the ~10 GB at which preflight calls the cache inflated
# (tools/checks/memory.py PAGE_CACHE_WARN_BYTES)
CACHE_DROPPED = r"^Cached:\s+[0-9]{1,7} kB$"
EARLYOOM_GONE = "earlyoom: not running"


def guard_steps(findings: list[Finding], hosts: list[str]) -> list[DeployStep]:
    """One step per host and per finding it answers, for the plan's own `hosts`."""
    steps: list[DeployStep] = []
    for finding in findings:
        for host in (h for h in finding.hosts if h in hosts):
            if finding.kind == "page_cache_inflated":
                steps.append(drop_cache_step(host))
            elif finding.kind == "earlyoom_running":
                steps.append(stop_earlyoom_step(host))
    return steps


def drop_cache_step(host: str) -> DeployStep:
    return DeployStep(
        kind="drop-cache",
        id=f"drop-cache:{host}",
        title="drop the page cache so the engine's start check sees the unified memory free "
        "(NVIDIA's UMA note; vLLM issue #48140)",
        host=host,
        actions=[DROP_CACHES],
        check=StepCheck(
            host=host,
            command="grep -E '^Cached:' /proc/meminfo",
            expect=CACHE_DROPPED,
            description="/proc/meminfo's Cached is under ~10 GB",
        ),
        rollback="none (the cache fills again as files are read)",
    )


def stop_earlyoom_step(host: str) -> DeployStep:
    return DeployStep(
        kind="stop-earlyoom",
        id=f"stop-earlyoom:{host}",
        title="stop earlyoom while the engine serves (it would kill the engine, the largest "
        "process, when memory runs low)",
        host=host,
        actions=["sudo systemctl stop earlyoom"],
        check=StepCheck(
            host=host,
            command=f"pgrep -x earlyoom || echo '{EARLYOOM_GONE}'",
            expect=f"^{EARLYOOM_GONE}$",
            description="earlyoom no longer runs",
        ),
        rollback="sudo systemctl start earlyoom",
        expected_downtime="none; the host has no earlyoom guard until it is started again "
        "(the kernel's OOM killer remains)",
    )
