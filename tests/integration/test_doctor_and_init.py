import re

import pytest
import yaml

from agent.faces.doctor import run_checks
from agent.faces.init_files import write_starter_files
from agent.runtime.settings import Settings
from agent.safety.rules import RuleSet
from sim.cluster import SimCluster
from tools.ssh import Inventory


def _by_name(checks):
    return {check.name: check for check in checks}


@pytest.mark.slow
async def test_doctor_on_a_healthy_cluster_and_on_docker_without_the_group(tmp_path):
    async with SimCluster("seed-pair", tmp_path / "a") as sim:
        inventory = sim.write_inventory(tmp_path / "a" / "inventory.yaml")
        checks = _by_name(await run_checks(Settings(api_key="sk-ant-x" * 3), inventory))
    assert checks["spark-b: ssh"].ok and checks["spark-a: docker"].ok
    assert checks["API key"].ok
    docker = checks["spark-a: docker"].detail  # not `server  Debug Mode: false`
    assert re.fullmatch(r"Docker \d+\.\d+\.\d+ answers; runtimes: .*runc", docker), docker
    assert checks["known_hosts"].detail.endswith(": 2 host keys recorded")

    async with SimCluster("docker-no-group", tmp_path / "b") as sim:
        inventory = sim.write_inventory(tmp_path / "b" / "inventory.yaml")
        checks = _by_name(await run_checks(Settings(), inventory))
    assert not checks["API key"].ok and "ANTHROPIC_API_KEY" in checks["API key"].fix
    docker = checks["spark-a: docker"]
    assert not docker.ok and "usermod -aG docker" in docker.fix


async def test_doctor_reports_a_host_it_cannot_reach(tmp_path):
    async with SimCluster("seed-pair", tmp_path / "c") as sim:
        inventory = sim.write_inventory(tmp_path / "c" / "inventory.yaml")
        sim.inject("spark-b", down=True)
        checks = _by_name(await run_checks(Settings(), inventory))
    assert checks["spark-a: ssh"].ok
    assert not checks["spark-b: ssh"].ok and "spark-b" in checks["spark-b: ssh"].detail


def test_init_writes_files_that_load_and_never_overwrites(tmp_path):
    report = write_starter_files(tmp_path)
    assert report == [f"wrote {tmp_path / 'inventory.yaml'}", f"wrote {tmp_path / 'settings.yaml'}"]
    inventory = Inventory.load(tmp_path / "inventory.yaml")
    assert inventory.get("spark-b").jump == "spark-a"
    settings = yaml.safe_load((tmp_path / "settings.yaml").read_text())
    assert Settings.model_validate(settings).mode == "ask"
    assert RuleSet.from_config(settings["rules"]).rules
    (tmp_path / "inventory.yaml").write_text("mine")
    again = write_starter_files(tmp_path)
    assert again[0].startswith("kept") and (tmp_path / "inventory.yaml").read_text() == "mine"


async def test_doctor_names_a_missing_identity_file_and_a_missing_known_hosts(tmp_path):
    async with SimCluster("seed-pair", tmp_path / "d") as sim:
        inventory = sim.write_inventory(tmp_path / "d" / "inventory.yaml")
        data = yaml.safe_load(inventory.read_text())
        data["defaults"]["identity_file"] = str(tmp_path / "no_such_key")
        data["known_hosts"] = str(tmp_path / "no_known_hosts")
        inventory.write_text(yaml.safe_dump(data))
        checks = _by_name(await run_checks(Settings(), inventory))
    ssh = checks["spark-a: ssh"]
    assert not ssh.ok and ssh.detail == f"identity file {tmp_path / 'no_such_key'} does not exist"
    assert "ssh-keygen -t ed25519" in ssh.fix and "check the address" not in ssh.fix
    known = checks["known_hosts"]
    assert not known.ok and "does not exist" in known.detail
    assert "verifies every host's key against this file" in known.detail
    assert "ssh-keyscan" in known.fix and "--trust-new-hosts" in known.fix


async def test_doctor_explains_an_unknown_host_key(tmp_path):
    async with SimCluster("seed-pair", tmp_path / "e") as sim:
        inventory = sim.write_inventory(tmp_path / "e" / "inventory.yaml")
        (tmp_path / "e" / "known_hosts").write_text("")
        checks = _by_name(await run_checks(Settings(), inventory))
    ssh = checks["spark-a: ssh"]
    assert not ssh.ok and "unknown host key for spark-a" in ssh.detail
    assert "compare the fingerprint" in ssh.fix and "--trust-new-hosts" in ssh.fix
