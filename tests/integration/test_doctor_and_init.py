import yaml

from agent.faces.doctor import run_checks
from agent.faces.init_files import write_starter_files
from agent.runtime.settings import Settings
from agent.safety.rules import RuleSet
from sim.cluster import SimCluster
from tools.ssh import Inventory


def _by_name(checks):
    return {check.name: check for check in checks}


async def test_doctor_on_a_healthy_cluster_and_on_docker_without_the_group(tmp_path):
    async with SimCluster("seed-pair", tmp_path / "a") as sim:
        inventory = sim.write_inventory(tmp_path / "a" / "inventory.yaml")
        checks = _by_name(await run_checks(Settings(api_key="sk-ant-x" * 3), inventory))
    assert checks["spark-b: ssh"].ok and checks["spark-a: docker"].ok
    assert checks["API key"].ok

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
