"""Prove the fabric before serving: a short nccl-tests `all_gather_perf` between the nodes, as a
job, with the measured bus bandwidth judged against the link.

The run is NVIDIA's NCCL playbook's (dgx-spark-playbooks nccl/README.md, docs/sources.md
§2.2): `mpirun -np N -H <ip1>:1,<ip2>:1 -x … $HOME/nccl-tests/build/all_gather_perf`, with NCCL on
both PCIe twins merged (NCCL_IB_HCA, NCCL_IB_MERGE_NICS=1) and sockets pinned to the fabric netdev.
nccl-tests must be built on every node as that playbook does: recon reads which node has it
(facts `fabric_tests`), and where one has not, the test is left out and the plan's risks say
that the fabric goes unmeasured and how to fix it (never assumed). Its `--mca plm_rsh_agent "ssh -o
StrictHostKeyChecking=no …"` is left out: Scout keeps host keys verified (mpirun's ssh to a
node's fabric address checks it against the head's known_hosts, where NVIDIA's passwordless-SSH
setup over the fabric interfaces puts it, docs/sources.md §2.1 step 3). The test runs
after every link is up and after the copies over the fabric (so it measures an idle link), and
before the engine starts. A healthy pair on one cable measured `# Avg bus bandwidth : 21.4033`
GB/s (171 Gb/s); after re-cabling without a reboot one measured 2.8 GB/s (§3.4, fixtures
spark_nccl_all_gather_perf_{healthy,degraded}.txt).
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import UTC, datetime

from tools.checks import Finding
from tools.checks.fabric import FABRIC_SPEED_MBPS
from tools.deploy.choices import DeployChoices
from tools.deploy.fabric.env import rdma_env, socket_env
from tools.deploy.fabric.paths import FabricPath
from tools.deploy.steps import DeployStep, job_log_check
from tools.recon.parsers.nccl import parse_nccl_avg_bus_bandwidth, parse_nccl_ranks
from tools.world.facts import FabricTestFacts
from tools.world.measurements import FabricMeasurement

FABRIC_TEST_JOB = "fabric-test"
PROGRAM = "$HOME/nccl-tests/build/all_gather_perf"
SIZES = "-b 1G -e 1G -f 2"  # one 1 GiB size: seconds, past the small-message latency regime
FAR_BELOW = 0.5  # a finding when the bus bandwidth is under half the link speed


NCCL_TESTS_FIX = (
    "build nccl-tests on every node as NVIDIA's NCCL playbook does (NCCL for sm_121, then "
    "`git clone https://github.com/NVIDIA/nccl-tests.git ~/nccl-tests/ && cd ~/nccl-tests && "
    "make MPI=1`)"
)


def _measurable(choices: DeployChoices, fabric: Mapping[str, FabricPath]) -> bool:
    """Two or more nodes on direct links (a routed ring is not measured this way)."""
    paths = [fabric[h] for h in choices.hosts]
    return len(paths) >= 2 and not any(p.routed for p in paths)


def _without(programs: Mapping[str, FabricTestFacts], hosts: list[str], tool: str) -> list[str]:
    """The hosts not known to have `tool` ("nccl_tests"/"perftest"): absent, or unknown."""
    return [h for h in hosts if getattr(programs.get(h, FabricTestFacts()), tool) is not True]


def fabric_test_risk(
    choices: DeployChoices,
    fabric: Mapping[str, FabricPath],
    programs: Mapping[str, FabricTestFacts],
) -> str | None:
    """Why the fabric goes unmeasured before serving and the fix, or None (it is measured, or
    there is nothing to measure)."""
    lacking = _without(programs, choices.hosts, "nccl_tests")
    if not _measurable(choices, fabric) or not lacking:
        return None
    unknown = [h for h in lacking if programs.get(h, FabricTestFacts()).nccl_tests is None]
    missing = [h for h in lacking if h not in unknown]
    said = []
    if missing:
        said.append(f"nccl-tests is not built on {', '.join(missing)}")
    if unknown:
        said.append(f"recon could not tell whether {', '.join(unknown)} has nccl-tests")
    fix = f"fix: {NCCL_TESTS_FIX}, then plan again"
    if _without(programs, choices.hosts, "perftest"):
        fix += "; or `sudo apt install perftest` on every node to measure with ib_write_bw"
    else:
        fix += "; perftest is on every node: ib_write_bw between them measures one link"
    return f"the fabric cannot be measured before serving ({'; '.join(said)}); {fix}"


def fabric_test_step(
    choices: DeployChoices,
    fabric: Mapping[str, FabricPath],
    needs: list[str],
    addresses: Mapping[str, str] | None = None,
    *,
    programs: Mapping[str, FabricTestFacts],
) -> DeployStep | None:
    """The all_gather_perf job on the head over every node, or None (one node, a ring, or a
    node without nccl-tests: see fabric_test_risk).

    A node whose fabric address is not known yet (its link comes up in an earlier step) is
    named by a lookup that runs when the job starts: from the head, `ssh <address the head
    reaches it at> ip -4 -br addr show dev <netdev>` (`addresses`: the inventory's; else its
    name)."""
    if not _measurable(choices, fabric) or _without(programs, choices.hosts, "nccl_tests"):
        return None
    paths = [fabric[h] for h in choices.hosts]
    head = paths[0]
    reach = addresses or {}
    env = {**socket_env(head), **rdma_env(head)}
    exports = " ".join(f"-x {k}={v}" for k, v in env.items())
    ranks = ",".join(
        f"{p.ip_or_lookup(None if p is head else reach.get(p.host, p.host))}:1" for p in paths
    )
    later = [p.host for p in paths if p.ip is None]
    when = f" ({', '.join(later)}'s address read when it runs)" if later else ""
    return DeployStep(
        kind="fabric-test",
        id=f"fabric-test:{choices.head}",
        title=f"measure the fabric: all_gather_perf over {len(paths)} nodes{when}",
        host=choices.head,
        actions=[f"mpirun -np {len(paths)} -H {ranks} {exports} {PROGRAM} {SIZES}"],
        check=job_log_check(
            choices.head,
            FABRIC_TEST_JOB,
            "all_gather_perf printed its average bus bandwidth",
            r"# Avg bus bandwidth",
        ),
        rollback="none (a measurement)",
        needs=needs,
        job=FABRIC_TEST_JOB,
    )


def bandwidth_verdict(log: str, host: str) -> tuple[float | None, Finding | None]:
    """The measured bus bandwidth in GB/s, and a finding when it is far below the link."""
    busbw = parse_nccl_avg_bus_bandwidth(log)
    if busbw is None:
        return None, None
    gbit = busbw * 8
    link = FABRIC_SPEED_MBPS / 1000
    if gbit >= link * FAR_BELOW:
        return busbw, None
    return busbw, Finding(
        severity="warning",
        check="fabric",
        kind="fabric_slow",
        hosts=[host],
        message=f"all_gather_perf measured {busbw:g} GB/s bus bandwidth ({gbit:.0f} Gb/s), far "
        f"below the {link:.0f} Gb/s link (a healthy pair: ~21.4 GB/s)",
        fix="check that NCCL uses both twins over RoCE (NCCL_DEBUG=INFO shows `NET/IB`, not "
        "`NET/Socket`) and the MTU on both ends; after re-cabling, reboot both nodes and measure "
        "again",
    )


def fabric_measurement(log: str, host: str) -> FabricMeasurement | None:
    """The world model's record of the test's log (None: it printed no average)."""
    busbw, finding = bandwidth_verdict(log, host)
    if busbw is None:
        return None
    return FabricMeasurement(
        host=host,
        nodes=parse_nccl_ranks(log),
        test=PROGRAM.rsplit("/", 1)[-1],
        busbw_gb_s=busbw,
        link_gbit=FABRIC_SPEED_MBPS / 1000,
        finding=finding,
        measured_at=datetime.now(UTC),
    )
