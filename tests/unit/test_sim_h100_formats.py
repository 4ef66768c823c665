"""The 8-GPU H100 node of `h100-pair` prints what real H100 nodes print (captures compared)."""

from __future__ import annotations

import io
import re
from contextlib import redirect_stdout
from pathlib import Path

from sim.fakehost import gpu, rdma
from sim.hostdir import host_state
from sim.scenario import load_scenario

FIXTURES = Path(__file__).parents[1] / "fixtures" / "recon"


def capture(name: str) -> list[str]:
    return (FIXTURES / name).read_text().splitlines()[1:]


def h100_state() -> dict:
    scenario = load_scenario("h100-pair")
    return host_state(scenario.hosts["h100-a"], scenario.user, now=1_000_000_000.0)


def printed(run, args: list[str], state: dict) -> str:
    out = io.StringIO()
    with redirect_stdout(out):
        assert run(args, state) == 0
    return out.getvalue()


def test_every_gpu_has_its_row_with_real_memory_numbers() -> None:
    state = h100_state()
    rows = gpu.render_table(state, now=0).splitlines()[8:40]
    wanted = capture("generic_nvidia-smi_8xh100_570.195.03.txt")
    for index in range(8):
        got, want = rows[4 * index : 4 * index + 4], wanted[4 * index : 4 * index + 4]
        assert got[0] == want[0] and got[2:] == want[2:]  # name, bus, ECC, MIG, separator
        reading = re.search(r"(\d+)C .* (\d+)W /", want[1])
        assert reading is not None
        state["gpu"].update(temp_c=int(reading[1]), power_w=int(reading[2]))
        assert gpu.render_table(state, now=0).splitlines()[9 + 4 * index] == want[1]


def test_query_and_list_give_one_line_per_gpu() -> None:
    text, code = gpu.render_query(
        ["index", "name", "memory.total", "memory.used", "memory.free"], {"csv"}, h100_state()
    )
    lines = text.splitlines()
    assert code == 0 and len(lines) == 9
    assert lines[1] == "0, NVIDIA H100 80GB HBM3, 81559 MiB, 0 MiB, 81080 MiB"
    listed = gpu.render_list(h100_state()).splitlines()
    assert len(listed) == 8 and listed[7].startswith("GPU 7: NVIDIA H100 80GB HBM3 (UUID: GPU-")
    assert len({line.split("UUID: ")[1] for line in listed}) == 8


def test_infiniband_rails_as_ibdev2netdev_ibstat_and_rdma_show_them() -> None:
    state = h100_state()
    assert printed(rdma.run_ibdev2netdev, [], state).splitlines() == capture(
        "generic_ibdev2netdev_dgx_h100.txt"
    )
    block = printed(rdma.run_ibstat, ["mlx5_0"], state).expandtabs(8).splitlines()
    assert block == capture("generic_ibstat_h100_cx7_ib_all_active.txt")[:17]
    links = printed(rdma.run_rdma, ["link", "show"], state).splitlines()
    assert links[0] == (
        "link mlx5_0/1 subnet_prefix fe80:0000:0000:0000 lid 128 sm_lid 1 lmc 0 "
        "state ACTIVE physical_state LINK_UP "
    )
    assert "link mlx5_7/1 state ACTIVE physical_state LINK_UP netdev enp170s0np0 " in links
