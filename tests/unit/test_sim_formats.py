"""The sim's fake tools print what the real ones print (compared with real captures)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from sim.fakehost import gotemplate, gpu, memory
from sim.hostdir import host_state
from sim.scenario import ScenarioError, list_scenarios, load_scenario

FIXTURES = Path(__file__).parents[1] / "fixtures" / "recon"


def capture(name: str) -> list[str]:
    """A shared capture without its first line (the source note)."""
    return (FIXTURES / name).read_text().splitlines()[1:]


def seed_state(host: str = "spark-a") -> dict:
    scenario = load_scenario("seed-pair")
    return host_state(scenario.hosts[host], scenario.user, now=1_000_000_000.0)


def test_nvidia_smi_table_matches_capture_byte_for_byte() -> None:
    state = seed_state()
    state["gpu"].update(temp_c=45, power_w=11, util_pct=10, perf="P0", display_active=True)
    state["gpu"]["processes"] = [
        {"pid": 4174, "type": "G", "name": "/usr/lib/xorg/Xorg", "memory_mib": 84},
        {"pid": 4399, "type": "G", "name": "/usr/bin/gnome-shell", "memory_mib": 125},
        {
            "pid": 4761,
            "type": "G",
            "name": "/snap/firefox/7182/usr/lib/firefox/firefox",
            "memory_mib": 273,
        },
    ]
    state["docker"]["containers"] = {}
    rendered = gpu.render_table(state, now=0).splitlines()
    assert rendered[1:] == capture("spark_nvidia-smi_580.95.05.txt")[1:]


def test_nvidia_smi_table_without_processes_matches_capture() -> None:
    state = seed_state("spark-b")
    state["gpu"].update(driver="580.105.08", temp_c=39, power_w=4, util_pct=0, perf="P8")
    rendered = gpu.render_table(state, now=0).splitlines()
    assert rendered[1:] == capture("spark_nvidia-smi_580.105.08_no_processes.txt")[1:]


def test_query_gpu_reports_memory_as_not_available_like_gb10() -> None:
    fields = ["index", "name", "memory.total", "memory.free"]
    text, code = gpu.render_query(fields, {"csv"}, seed_state())
    assert code == 0
    assert text.splitlines() == capture("spark_nvidia-smi_query_gpu_memory_NA.txt")[1:3]
    text, _ = gpu.render_query(
        ["memory.used", "power.draw"], {"csv", "noheader", "nounits"}, seed_state()
    )
    assert text == "[N/A], 11.00\n"


def test_unknown_query_field_is_an_error() -> None:
    text, code = gpu.render_query(["memory.bogus"], {"csv"}, seed_state())
    assert code == 2 and 'Field "memory.bogus" is not a valid field to query.' in text


def test_topology_legend_maps_nics_to_roce_devices() -> None:
    assert gpu.render_topo(seed_state()).splitlines() == capture("spark_nvidia-smi_topo_m.txt")


def test_free_h_has_the_procps_columns(capsys: pytest.CaptureFixture[str]) -> None:
    memory.run_free(["-h"], seed_state())
    lines = capsys.readouterr().out.splitlines()
    real = capture("spark_free_h.txt")
    assert lines[0] == real[0]
    ends = [[m.end() for m in re.finditer(r"\S+", line)] for line in (lines[1], real[1])]
    assert ends[0] == ends[1]
    assert lines[1].split()[1] == "121Gi"


def test_meminfo_counts_container_memory_as_used() -> None:
    state = seed_state()
    busy = memory.memory_kb(state)
    state["docker"]["containers"]["vllm_node"]["state"] = "exited"
    idle = memory.memory_kb(state)
    assert busy["MemTotal"] == idle["MemTotal"] == 127600748
    assert idle["MemAvailable"] - busy["MemAvailable"] == 95703125


def test_docker_table_aligns_like_the_cli() -> None:
    real = capture("spark_docker_ps_ray_node.txt")
    rows = [
        ["CONTAINER ID", "IMAGE", "COMMAND", "CREATED", "STATUS", "PORTS", "NAMES"],
        [
            "1da3039c0282",
            "nvcr.io/nvidia/vllm:25.11-py3",
            '"/bin/bash -c \'ray s…"',
            "About a minute ago",
            "Up About a minute",
            "",
            "node-58",
        ],
    ]
    assert gotemplate.table(rows).splitlines()[1] == real[1]


@pytest.mark.slow
def test_every_shipped_scenario_loads() -> None:
    names = list_scenarios()
    assert {
        "seed-pair",
        "healthy-pair",
        "no-cable",
        "link-local-only",
        "docker-no-group",
        "ota-mismatch",
        "page-cache",
        "worker-down",
        "spark-trio",
        "spark-rack-8",
        "h100-pair",
    } <= set(names)
    for name in names:
        scenario = load_scenario(name)
        assert scenario.head == ("h100-a" if "h100-a" in scenario.hosts else "spark-a")


def test_unknown_scenario_names_the_choices() -> None:
    with pytest.raises(ScenarioError, match=r"choose one of: .*seed-pair"):
        load_scenario("no-such-scenario")


def test_invalid_scenario_file_says_what_is_wrong(tmp_path: Path) -> None:
    bad = tmp_path / "bad.yaml"
    bad.write_text("name: bad\nhosts:\n  a: {role: boss}\n")
    with pytest.raises(ScenarioError, match=r"bad\.yaml is invalid"):
        load_scenario(bad)
