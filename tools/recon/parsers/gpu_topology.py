"""`nvidia-smi topo -m`: how a host's GPUs reach each other, NVLink or PCIe.

The matrix has a row per GPU (and per NIC); a GPU pair's cell is `NV#` (a bonded set of #
NVLinks: NV18 on an H100/H200 HGX board's NVSwitch) or a PCIe path (`PIX`, `PXB`, `PHB`,
`NODE`, `SYS`), the legend says. Read from real captures: tests/fixtures/recon/h200_nvidia-smi_
topo.txt (one GPU, a header underlined with an escape sequence), generic_nvidia-smi_topo_m_
8xh100_nv18.txt and generic_nvidia-smi_topo_m_4gpu_pcie_only.txt.
"""

from __future__ import annotations

import re

from pydantic import BaseModel

from tools.recon.parsers.errors import ParseError

_ANSI = re.compile(r"\x1b\[[0-9;]*m")
_GPU = re.compile(r"^GPU(\d+)$")
_NVLINK = re.compile(r"^NV(\d+)$")


class GpuTopology(BaseModel):
    """GPU-to-GPU links: `links[(i, j)]` is the matrix cell for GPUs i < j."""

    gpus: int
    links: dict[tuple[int, int], str]

    @property
    def interconnect(self) -> str | None:
        """ "nvlink" when every GPU pair has NVLink, "pcie" when none has, "mixed" else; None
        with one GPU."""
        if not self.links:
            return None
        nvlink = [bool(_NVLINK.match(cell)) for cell in self.links.values()]
        return "nvlink" if all(nvlink) else "pcie" if not any(nvlink) else "mixed"

    @property
    def detail(self) -> str:
        """The cells as a person reads them: `NV18 between all 8 GPUs`, `PCIe only (PHB, SYS)`."""
        cells = sorted(set(self.links.values()))
        if self.interconnect == "nvlink":
            return f"{'/'.join(cells)} between all {self.gpus} GPUs"
        if self.interconnect == "pcie":
            return f"PCIe only between its {self.gpus} GPUs ({', '.join(cells)})"
        return f"NVLink between some of its {self.gpus} GPUs only ({', '.join(cells)})"


def parse_nvidia_smi_topo(text: str) -> GpuTopology:
    lines = [_ANSI.sub("", line) for line in text.splitlines()]
    header = next((line.split("\t") for line in lines if "\tGPU0" in line), None)
    if header is None:
        raise ParseError("the `nvidia-smi topo -m` matrix (a GPU0 column)", text)
    columns = [cell.strip() for cell in header]
    gpu_columns = {i: int(m[1]) for i, c in enumerate(columns) if (m := _GPU.match(c))}
    links: dict[tuple[int, int], str] = {}
    rows = 0
    for line in lines:
        cells = line.split("\t")
        row = _GPU.match(cells[0].strip())
        if row is None:
            continue
        rows += 1
        for position, other in gpu_columns.items():
            if position < len(cells) and other > int(row[1]):
                links[(int(row[1]), other)] = cells[position].strip()
    if rows == 0:
        raise ParseError("GPU rows in the `nvidia-smi topo -m` matrix", text)
    return GpuTopology(gpus=rows, links=links)
