"""`scout read`: every real capture Scout has is identified by its format's own signs and read;
anything else is "no reader for this" (tests/fixtures/recon and jobs, each with its source)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from tests.support.captures import CAPTURES, JOB_CAPTURES, capture, job_capture
from tools.formats import Reading, Unread, read_pasted

ROOT = Path(__file__).resolve().parents[2]
RECON = sorted(path.name for path in CAPTURES.glob("*.txt"))
JOBS = sorted(path.name for path in JOB_CAPTURES.glob("*.txt"))


def _read(text: str) -> Reading:
    reading = read_pasted(text)
    assert isinstance(reading, Reading), reading
    return reading


@pytest.mark.parametrize("name", RECON)
def test_every_host_capture_is_identified_and_read(name: str) -> None:
    assert _read(capture(name)).facts


@pytest.mark.parametrize("name", JOBS)
def test_every_job_log_is_identified_and_read(name: str) -> None:
    assert _read(job_capture(name)).facts


@pytest.mark.parametrize(
    ("name", "format_name", "finding"),
    [
        ("generic_ibstat_roce_cx6lx_down.txt", "ibstat", "mlx5_0 port 1 is Down (Disabled)"),
        ("generic_ibv_devinfo_cx7_ib_port_down.txt", "ibv_devinfo", "mlx5_0 port 1 is PORT_DOWN"),
        ("spark_ip_s_link_show_cx7_nocable.txt", "ip addr show / ip -s link", "enp1s0f0np0 has no"),
        ("spark_ip_br_link.txt", "ip -br link", "enp1s0f0np0 has no carrier"),
        ("generic_nvidia-smi_topo_m_4gpu_pcie_only.txt", "nvidia-smi topo -m", "no NVLink"),
        ("generic_nvidia-smi_L_a100_mig_4_instances.txt", "nvidia-smi -L", "4 MIG instances"),
        ("spark_nvidia-smi_query_gpu_memory_NA.txt", "outputs", "GPU memory is not reported"),
    ],
)
def test_a_capture_is_named_by_its_format_with_what_it_means(
    name: str, format_name: str, finding: str
) -> None:
    reading = _read(capture(name))
    assert format_name in reading.format
    assert any(finding in said for said in reading.findings), reading.findings


def test_the_ib_port_that_works_gives_no_finding() -> None:
    reading = _read(capture("generic_ibv_devinfo_azure_roce_port_active.txt"))
    assert reading.format == "ibv_devinfo" and not reading.findings
    assert "PORT_ACTIVE, Ethernet, MTU 1024" in str(reading.facts)


def test_the_xml_report_and_the_docker_table_are_read() -> None:
    xml = _read(capture("h200_nvidia-smi_qx.txt"))
    assert xml.format == "nvidia-smi -q -x" and "H200" in str(xml.facts)
    table = _read(capture("spark_docker_ps_table_custom_workbench.txt"))
    assert table.format == "docker ps" and "traefik:v3.6.1" in str(table.facts)


@pytest.mark.parametrize(
    "name", ["generic_nvidia-smi_topo_m_8xh100_nv18.txt", "spark_nvidia-smi_topo_m.txt"]
)
def test_topo_aligned_with_spaces_reads_as_with_tabs(name: str) -> None:
    tabs = _read(capture(name))
    spaces = _read(capture(name).expandtabs(8))
    assert spaces.format == "nvidia-smi topo -m" and spaces.facts == tabs.facts


def test_no_usable_gpu_is_a_finding() -> None:
    for said in (
        "No devices were found",
        "bash: nvidia-smi: command not found",
        "NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver.",
    ):
        assert any("no usable GPU" in f for f in _read(said + "\n").findings)


def test_a_random_text_has_no_reader() -> None:
    text = "The quick brown fox jumps over the lazy dog.\nIt was a bright cold day in April.\n"
    assert read_pasted(text) == Unread(None)


def test_text_that_resembles_a_format_names_it_as_closest() -> None:
    assert read_pasted("Legend:\n  X = Self\n") == Unread("nvidia-smi topo -m")


@pytest.mark.slow
def test_scout_read_prints_the_format_and_says_when_it_cannot(tmp_path: Path) -> None:
    pasted = tmp_path / "ibstat.txt"
    pasted.write_text(capture("generic_ibstat_cx7_ethernet_down.txt"))
    run = [sys.executable, "-m", "agent.faces.cli", "read"]
    done = subprocess.run([*run, str(pasted)], capture_output=True, text=True, cwd=ROOT)
    assert done.returncode == 0 and done.stdout.startswith("format: ibstat\n")
    assert "the fabric cannot use it" in done.stdout
    unread = subprocess.run([*run, "-"], input="hello\n", capture_output=True, text=True, cwd=ROOT)
    assert (unread.returncode, unread.stdout) == (1, "no reader for this\n")
    missing = subprocess.run([*run, str(tmp_path / "no")], capture_output=True, text=True, cwd=ROOT)
    assert missing.returncode == 2 and "cannot read" in missing.stderr
    assert "Traceback" not in missing.stderr


def test_chat_reads_a_block_pasted_after_read_without_the_model() -> None:
    import asyncio
    import io

    from rich.console import Console

    from agent.faces.chat import COMMANDS, run_slash

    out = io.StringIO()
    console = Console(file=out, width=200, color_system=None)
    topo = capture("generic_nvidia-smi_topo_m_4gpu_pcie_only.txt").expandtabs(8)

    asyncio.run(run_slash("/read\n" + topo, None, console, COMMANDS))  # type: ignore[arg-type]
    asyncio.run(run_slash("/read", None, console, COMMANDS))  # type: ignore[arg-type]

    said = out.getvalue()
    assert said.startswith("format: nvidia-smi topo -m\n")
    assert "no NVLink between GPUs: PCIe only between its 4 GPUs (PHB, SYS)" in said
    assert "/read FILE, or /read then the output on the lines below it" in said
