"""The scenarios of issue 14 over real SSH: what recon sees and which findings a user reads.

Each test probes a scenario with the real probe pack and checks the facts and findings; where a
scenario is about what a command does (a pull, a download, Ray in an image), it runs it.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from sim.cluster import SimCluster
from tools.checks.fabric import pair_link
from tools.checks.registry import compute_findings
from tools.recon.image_probe import apply_contents, contents_command, image_ref, parse_contents
from tools.recon.probe import probe_hosts
from tools.ssh import Inventory, SSHPool
from tools.ssh.pool import CommandResult
from tools.world.facts import HostFacts, ImageContents
from tools.world.findings import Finding

MODEL = "Qwen/Qwen3.5-122B-A10B-FP8"
MODEL_BYTES = 119 * 10**9
NGC = "nvcr.io/nvidia/vllm:26.05-py3"
WITH_RAY = "nvcr.io/nvidia/vllm:25.11-py3"  # the 26.05 image has none (docs/sources.md §2.3)
NCCL = "2.28.9"  # what every simulated engine image links (sim/scenario.py Image.nccl)


@dataclass
class Sim:
    pool: SSHPool

    async def run(self, host: str, command: str, **env: str) -> CommandResult:
        return await self.pool.run(host, command, timeout=60, env=env or None)

    async def recon(self) -> dict[str, HostFacts]:
        """The recon pack, then each image asked what it holds (a run of it, so apart)."""
        probed = await probe_hosts(self.pool, ["spark-a", "spark-b"])
        assert probed.failures == {}
        for host, facts in probed.facts.items():
            refs = [image_ref(i.repository, i.tag) for i in facts.docker.images]
            if refs:
                asked = await self.run(host, contents_command(refs))
                apply_contents(facts.docker, parse_contents(asked.stdout))
        return probed.facts


@pytest.fixture
async def sim(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[Sim]:
    async with SimCluster(request.param, tmp_path / "sim") as cluster:
        inventory = Inventory.load(cluster.write_inventory(tmp_path / "inventory.yaml"))
        async with SSHPool(inventory) as pool:
            yield Sim(pool)


def kinds(findings: list[Finding]) -> dict[str, Finding]:
    return {f.kind: f for f in findings}


@pytest.mark.slow
@pytest.mark.parametrize("sim", ["fresh-pair"], indirect=True)
async def test_fresh_pair_has_nothing_and_the_worker_no_internet(sim: Sim) -> None:
    facts = await sim.recon()
    head, worker = facts["spark-a"], facts["spark-b"]
    assert head.hf_cache.models == {} and worker.hf_cache.models == {}
    assert [(i.repository, i.contents) for i in head.docker.images] == [
        ("vllm-node", ImageContents(ray="2.49.1", vllm="0.10.2", nccl=NCCL))
    ]
    assert worker.docker.images == []
    assert "vllm_node" in [c.name for c in head.docker.containers]
    pull = await sim.run("spark-b", f"docker pull {NGC}")
    assert pull.exit_status == 1
    assert 'Get "https://nvcr.io/v2/": dial tcp: lookup nvcr.io' in pull.stderr
    download = await sim.run("spark-b", f"hf download {MODEL}")
    assert download.exit_status == 1
    assert "Please check your internet connection" in download.stderr


@pytest.mark.slow
@pytest.mark.parametrize("sim", ["fresh-pair"], indirect=True)
async def test_the_ngc_image_has_no_ray_until_the_playbook_installs_it(sim: Sim) -> None:
    assert (await sim.run("spark-a", f"docker pull {NGC}")).exit_status == 0
    head = (await sim.recon())["spark-a"]
    ngc = next(i for i in head.docker.images if i.repository == "nvcr.io/nvidia/vllm")
    assert ngc.contents == ImageContents(
        vllm="0.19.1+nv26.05", nccl=NCCL
    )  # no Ray: docs/sources.md §2.3
    run = f"docker run -d --name node-1 --network host --gpus all {NGC} sleep infinity"
    assert (await sim.run("spark-a", run)).exit_status == 0
    missing = await sim.run("spark-a", "docker exec node-1 ray start --head --port 6379")
    assert missing.exit_status == 126
    assert 'exec: "ray": executable file not found in $PATH' in missing.stderr
    in_bash = await sim.run("spark-a", "docker exec node-1 bash -c 'ray --version'")
    assert in_bash.exit_status == 127 and "bash: ray: command not found" in in_bash.stderr
    install = await sim.run("spark-a", "docker exec node-1 pip install 'ray[default]>=2.9'")
    assert install.exit_status == 0, install.stderr
    assert "Successfully installed ray-2.49.1" in install.stdout
    started = await sim.run("spark-a", "docker exec node-1 ray start --head --port 6379")
    assert started.exit_status == 0 and "Ray runtime started." in started.stdout
    shown = await sim.run("spark-a", "docker exec node-1 pip show ray vllm sglang")
    assert "Name: ray\nVersion: 2.49.1" in shown.stdout
    assert "WARNING: Package(s) not found: sglang" in shown.stderr


@pytest.mark.parametrize("sim", ["fresh-pair"], indirect=True)
async def test_a_container_without_network_cannot_pip_install(sim: Sim) -> None:
    await sim.run("spark-a", f"docker pull {NGC}")
    probe = f"docker run --rm --network none {NGC} pip install 'ray[default]>=2.9'"
    offline = await sim.run("spark-a", probe)
    assert offline.exit_status == 1
    assert "Temporary failure in name resolution" in offline.stderr
    assert "No matching distribution found for ray[default]>=2.9" in offline.stderr
    assert "sim_" not in (await sim.run("spark-a", "docker ps -a")).stdout  # --rm removed it


@pytest.mark.slow
@pytest.mark.parametrize("sim", ["gated-model"], indirect=True)
async def test_gated_model_needs_hf_token(sim: Sim) -> None:
    refused = await sim.run("spark-a", f"hf download {MODEL}")
    assert refused.exit_status == 1 and "GatedRepoError: 401" in refused.stderr
    allowed = await sim.run("spark-a", f"hf download {MODEL}", HF_TOKEN="hf_sim_token")
    assert allowed.exit_status == 0, allowed.stderr
    assert (await sim.recon())["spark-a"].hf_cache.models == {MODEL: MODEL_BYTES}


@pytest.mark.slow
@pytest.mark.parametrize("sim", ["small-disk"], indirect=True)
async def test_small_disk_has_no_room_and_a_download_fills_it(sim: Sim) -> None:
    root = next(d for d in (await sim.recon())["spark-a"].disk.disks if d.mount == "/")
    assert root.available_bytes < MODEL_BYTES
    full = await sim.run("spark-a", f"hf download {MODEL}")
    assert full.exit_status == 1
    assert "Not enough free disk space to download the file" in full.stderr
    assert "OSError: [Errno 28] No space left on device" in full.stderr
    after = next(d for d in (await sim.recon())["spark-a"].disk.disks if d.mount == "/")
    assert after.available_bytes == 0


@pytest.mark.slow
@pytest.mark.parametrize("sim", ["link-local-pair"], indirect=True)
async def test_link_local_on_one_cable_is_a_working_fabric(sim: Sim) -> None:
    facts = await sim.recon()
    link = pair_link(facts["spark-a"], facts["spark-b"])
    assert link.state == "up" and str(link.subnet) == "169.254.0.0/16"
    fabric = [f for f in compute_findings(facts, MODEL_BYTES) if f.check in ("fabric", "mtu")]
    assert fabric == []
    for host in ("spark-a", "spark-b"):
        run = f"docker run -d --name node --network host --gpus all {WITH_RAY} sleep infinity"
        assert (await sim.run(host, run)).exit_status == 0
    head = "docker exec node ray start --head --port 6379 --node-ip-address 169.254.127.30"
    assert (await sim.run("spark-a", head)).exit_status == 0
    join = (
        "docker exec node ray start --address=169.254.127.30:6379 --node-ip-address 169.254.35.62"
    )
    joined = await sim.run("spark-b", join)
    assert joined.exit_status == 0, joined.stderr
    status = await sim.run("spark-a", "docker exec node ray status")
    assert status.stdout.count(" 1 node_") == 2


@pytest.mark.slow
@pytest.mark.parametrize("sim", ["link-local-two-cables"], indirect=True)
async def test_two_cables_link_local_get_per_twin_subnets_advice(sim: Sim) -> None:
    found = compute_findings(await sim.recon())
    advice = next(f for f in found if f.kind == "link_local_two_cables" and f.hosts == ["spark-a"])
    assert advice.message.startswith("spark-a: two QSFP cables in use (cages p0, p1)")
    assert "192.168.101.x/24 on enP2p1s0f1np1" in (advice.fix or "")


@pytest.mark.parametrize("sim", ["mtu-1500"], indirect=True)
async def test_mtu_mismatch_is_a_finding(sim: Sim) -> None:
    mtu = kinds(compute_findings(await sim.recon()))["fabric_mtu_mismatch"]
    assert mtu.message == (
        "fabric MTU differs between spark-a and spark-b (1500 vs 9000): frames above 1500 "
        "bytes from the 9000 side are dropped"
    )
    assert "on spark-b `sudo ip link set enp1s0f1np1 mtu 9000`" in (mtu.fix or "")


@pytest.mark.parametrize("sim", ["no-cx7"], indirect=True)
async def test_no_connectx_says_check_the_cable_or_driver(sim: Sim) -> None:
    facts = await sim.recon()
    assert [i.name for i in facts["spark-b"].network.interfaces if i.fabric] == []
    missing = kinds(compute_findings(facts))["no_rdma_devices"]
    assert missing.severity == "blocker" and missing.needs_person
    assert (missing.fix or "").startswith("check the cable, then the driver")


@pytest.mark.slow
@pytest.mark.parametrize("sim", ["seed-pair"], indirect=True)
async def test_seed_pair_swap_in_use_and_image_contents(sim: Sim) -> None:
    head = (await sim.recon())["spark-a"]
    assert head.memory.swap_used_bytes == 1778892 * 1024
    contents = {f"{i.repository}:{i.tag}": i.contents for i in head.docker.images}
    assert contents["lmsysorg/sglang:latest-cu130"] == ImageContents(sglang="0.5.9", nccl=NCCL)
    assert contents["vllm-node:latest"] == ImageContents(ray="2.49.1", vllm="0.10.2", nccl=NCCL)
