"""`nvidia-smi topo -m`: how a host's GPUs reach each other, NVLink or PCIe.

The matrix has a row per GPU (and per NIC); a GPU pair's cell is `NV#` (a bonded set of #
NVLinks: NV18 on an H100/H200 HGX board's NVSwitch) or a PCIe path (`PIX`, `PXB`, `PHB`,
`NODE`, `SYS`), the legend says. Read from real captures: tests/fixtures/recon/h200_nvidia-smi_
topo.txt (one GPU, a header underlined with an escape sequence), generic_nvidia-smi_topo_m_
8xh100_nv18.txt and generic_nvidia-smi_topo_m_4gpu_pcie_only.txt.
"""

import re

from pydantic import BaseModel

from tools.recon.parsers.errors import ParseError

_ANSI = re.compile(r"\x1b\[[0-9;]*m")
_GPU = re.compile(r"^GPU(\d+)$")
_NVLINK = re.compile(r"^NV(\d+)$")
_DEVICE = re.compile(r"^(?:GPU|NIC|mlx5_|CPU$)\w*$")


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
    """Read the matrix by its words, not its tabs: pasted or logged, the columns are aligned with
    spaces, and every cell (`X`, `NV18`, `PHB`) is one word, so a row's words line up with the
    header's device names (GPUs, then NICs) whatever the spacing."""
    lines = [_ANSI.sub("", line).split() for line in text.splitlines()]
    header = next((words for words in lines if words[:1] == ["GPU0"] and not _is_row(words)), None)
    if header is None:
        raise ParseError("the `nvidia-smi topo -m` matrix (a GPU0 column)", text)
    devices = header[: next((i for i, w in enumerate(header) if not _DEVICE.match(w)), len(header))]
    gpu_columns = {i: int(m[1]) for i, c in enumerate(devices) if (m := _GPU.match(c))}
    links: dict[tuple[int, int], str] = {}
    rows = 0
    for words in lines:
        if not _is_row(words):
            continue
        rows += 1
        row, cells = int(words[0][3:]), words[1:]
        for position, other in gpu_columns.items():
            if position < len(cells) and other > row:
                links[(row, other)] = cells[position]
    if rows == 0:
        raise ParseError("GPU rows in the `nvidia-smi topo -m` matrix", text)
    return GpuTopology(gpus=rows, links=links)


def _is_row(words: list[str]) -> bool:
    """A GPU's row: its name, then a cell (`X` on the diagonal, a link elsewhere)."""
    return len(words) > 1 and bool(_GPU.match(words[0])) and not _DEVICE.match(words[1])
