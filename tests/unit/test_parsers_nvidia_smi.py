"""nvidia-smi in all its forms, against real DGX Spark captures and small hand-written variants."""

import pytest

from tests.support.captures import capture
from tools.recon.parsers import (
    ParseError,
    parse_nvidia_smi_list,
    parse_nvidia_smi_query_csv,
    parse_nvidia_smi_table,
)


def test_gb10_table_reports_driver_cuda_and_unsupported_memory() -> None:
    report = parse_nvidia_smi_table(capture("spark_nvidia-smi_580.95.05.txt"))
    assert (report.driver_version, report.cuda_version) == ("580.95.05", "13.0")
    [gpu] = report.gpus
    assert gpu.name == "NVIDIA GB10"
    assert gpu.bus_id == "0000000F:01:00.0"
    assert gpu.memory_supported is False
    assert (gpu.memory_total_mib, gpu.memory_used_mib) == (None, None)
    assert (gpu.temperature_c, gpu.power_w, gpu.power_cap_w) == (45, 11.0, None)
    assert (gpu.performance_state, gpu.persistence, gpu.utilization_percent) == ("P0", True, 10)
    assert [(p.pid, p.type, p.memory_used_mib) for p in report.processes] == [
        (4174, "G", 84),
        (4399, "G", 125),
        (4761, "G", 273),
    ]
    assert report.processes[2].name == ".../7182/usr/lib/firefox/firefox"


@pytest.mark.parametrize(
    ("name", "driver", "temperature_c", "process_count"),
    [
        ("spark_nvidia-smi_580.105.08_no_processes.txt", "580.105.08", 39, 0),
        ("spark_nvidia-smi_580.126.09_idle.txt", "580.126.09", 41, 2),
    ],
)
def test_other_gb10_driver_captures(
    name: str, driver: str, temperature_c: int, process_count: int
) -> None:
    report = parse_nvidia_smi_table(capture(name))
    assert report.driver_version == driver
    assert report.gpus[0].temperature_c == temperature_c
    assert report.gpus[0].memory_supported is False
    assert len(report.processes) == process_count


def test_two_component_driver_version() -> None:
    text = capture("spark_nvidia-smi_580.95.05.txt").replace(
        "NVIDIA-SMI 580.95.05              Driver Version: 580.95.05 ",
        "NVIDIA-SMI 580.142                Driver Version: 580.142   ",
    )
    assert parse_nvidia_smi_table(text).driver_version == "580.142"


DISCRETE_TABLE = """\
+-----------------------------------------------------------------------------------------+
| NVIDIA-SMI 550.54.15              Driver Version: 550.54.15      CUDA Version: 12.4     |
|-----------------------------------------+------------------------+----------------------+
| GPU  Name                 Persistence-M | Bus-Id          Disp.A | Volatile Uncorr. ECC |
| Fan  Temp   Perf          Pwr:Usage/Cap |           Memory-Usage | GPU-Util  Compute M. |
|                                         |                        |               MIG M. |
|=========================================+========================+======================|
|   0  NVIDIA H100 80GB HBM3          Off |   00000000:19:00.0 Off |                    0 |
| N/A   31C    P0             71W /  700W |   40000MiB /  81559MiB |     35%      Default |
|                                         |                        |             Disabled |
+-----------------------------------------+------------------------+----------------------+
|   1  NVIDIA H100 80GB HBM3          Off |   00000000:3B:00.0 Off |                    0 |
| N/A   30C    P0             69W /  700W |       1MiB /  81559MiB |      0%      Default |
|                                         |                        |             Disabled |
+-----------------------------------------+------------------------+----------------------+

+-----------------------------------------------------------------------------------------+
| Processes:                                                                              |
|  GPU   GI   CI        PID   Type   Process name                              GPU Memory |
|        ID   ID                                                               Usage      |
|=========================================================================================|
|    0   N/A  N/A     12345      C   python3                                     39990MiB |
+-----------------------------------------------------------------------------------------+
"""


def test_discrete_gpus_report_memory_in_mib() -> None:
    report = parse_nvidia_smi_table(DISCRETE_TABLE)
    assert [gpu.index for gpu in report.gpus] == [0, 1]
    first = report.gpus[0]
    assert (first.memory_used_mib, first.memory_total_mib, first.memory_supported) == (
        40000,
        81559,
        True,
    )
    assert (first.power_cap_w, first.mig_mode, first.volatile_uncorrected_ecc) == (
        700.0,
        "Disabled",
        "0",
    )
    assert report.gpus[1].bus_id == "00000000:3B:00.0"
    assert report.processes[0].memory_used_mib == 39990


def test_table_parser_rejects_other_text() -> None:
    with pytest.raises(ParseError, match="Driver Version") as error:
        parse_nvidia_smi_table("bash: nvidia-smi: command not found")
    assert "command not found" in str(error.value)


def test_list_gives_uuid() -> None:
    [gpu] = parse_nvidia_smi_list(capture("spark_nvidia-smi_L.txt"))
    assert (gpu.index, gpu.name) == (0, "NVIDIA GB10")
    assert gpu.uuid == "GPU-b0ec33a0-2589-53de-953c-0713d37d0794"
    assert parse_nvidia_smi_list("No devices were found\n") == []


def _query_sections() -> list[tuple[str, str]]:
    """The query capture holds three posts, each `$ command` then output, split by `---`."""
    sections = []
    for block in capture("spark_nvidia-smi_query_gpu_memory_NA.txt").split("---\n"):
        command, _, output = block.partition("\n")
        sections.append((command, output))
    return sections


def test_query_csv_with_header_and_units() -> None:
    (_, first), (_, second), _ = _query_sections()
    result = parse_nvidia_smi_query_csv(first)
    assert result.rows == [
        {"index": 0, "name": "NVIDIA GB10", "memory.total": None, "memory.free": None}
    ]
    assert result.units["memory.total"] == "MiB"
    [row] = parse_nvidia_smi_query_csv(second).rows
    assert row["memory.used"] is None
    assert (row["utilization.gpu"], row["power.draw"], row["temperature.gpu"]) == (0, 11.17, 35)


def test_query_csv_without_header_uses_given_fields() -> None:
    *_, (_, third) = _query_sections()
    [row] = parse_nvidia_smi_query_csv(
        third, ["memory.used", "memory.total", "utilization.memory"]
    ).rows
    assert row == {"memory.used": None, "memory.total": None, "utilization.memory": 0}


def test_query_csv_nounits_keeps_driver_version_as_text() -> None:
    fields = ["name", "driver_version", "memory.total", "power.draw"]
    text = (
        "name, driver_version, memory.total [MiB], power.draw [W]\n"
        "NVIDIA GB10, 580.142, [N/A], 4.93\n"
    )
    assert parse_nvidia_smi_query_csv(text, fields).rows == [
        {
            "name": "NVIDIA GB10",
            "driver_version": "580.142",
            "memory.total": None,
            "power.draw": 4.93,
        }
    ]
    [row] = parse_nvidia_smi_query_csv("NVIDIA GB10, 580.95.05, [N/A], [N/A]\n", fields).rows
    assert row["driver_version"] == "580.95.05"
    assert row["power.draw"] is None


def test_query_csv_with_wrong_column_count_is_an_error() -> None:
    with pytest.raises(ParseError, match="2 comma-separated values"):
        parse_nvidia_smi_query_csv("0, NVIDIA GB10, 12\n", ["index", "name"])


Q_XML = """<?xml version="1.0" ?>
<!DOCTYPE nvidia_smi_log SYSTEM "nvsmi_device_v12.dtd">
<nvidia_smi_log>
  <driver_version>580.142</driver_version>
  <cuda_version>13.0</cuda_version>
  <attached_gpus>1</attached_gpus>
  <gpu id="0000000F:01:00.0">
    <product_name>NVIDIA GB10</product_name>
    <addressing_mode>ATS</addressing_mode>
    <fb_memory_usage><total>N/A</total><reserved>N/A</reserved><used>N/A</used><free>N/A</free></fb_memory_usage>
    <temperature><gpu_temp>41 C</gpu_temp></temperature>
    <gpu_power_readings><power_draw>4.93 W</power_draw></gpu_power_readings>
    <processes>
      <process_info>
        <pid>2804</pid><type>G</type><process_name>/usr/lib/xorg/Xorg</process_name>
        <used_memory>179 MiB</used_memory>
      </process_info>
    </processes>
  </gpu>
</nvidia_smi_log>
"""


def test_a_cut_process_memory_value_keeps_the_row() -> None:
    """nvidia-smi prints `10707...` when the value does not fit (a real Spark capture): the
    engine is kept, its memory unknown and flagged, not dropped."""
    report = parse_nvidia_smi_table(
        capture("spark_nvidia-smi_580.126.09_enginecore_memory_cut.txt")
    )
    assert [(p.pid, p.name, p.memory_used_mib, p.memory_cut) for p in report.processes] == [
        (2804, "/usr/lib/xorg/Xorg", 179, False),
        (3060, "/usr/bin/gnome-shell", 48, False),
        (3048280, "VLLM::EngineCore", None, True),
    ]
