"""What the PCI bus and the kernel log say about a host's GPUs, beside nvidia-smi.

- `lspci -d 10de:`: one line per NVIDIA PCI function; a GPU is a `3D controller` or `VGA
  compatible controller` (NVSwitches are `Bridge`, a GPU's audio function `Audio device`).
  Fewer GPUs in nvidia-smi than here: the driver lost one.
- `dmesg | grep 'NVRM: Xid'`: the driver's Xid lines, `NVRM: Xid (PCI:0000:61:00): 119, pid=…,
  name=nvidia-smi, Timeout waiting for RPC from GSP! …` (tests/fixtures/recon/generic_dmesg_nvrm_
  xid119_gsp_timeout.txt). Where dmesg is restricted it says `Operation not permitted`: unknown.
"""

import re

from pydantic import BaseModel

_GPU_FUNCTION = re.compile(r"\b(?:3D controller|VGA compatible controller)\b.*NVIDIA", re.I)
_XID = re.compile(r"NVRM: Xid \((?P<where>[^)]*)\): (?P<code>\d+),\s*(?P<rest>.*)$")
NOT_PERMITTED = "Operation not permitted"


class XidEvent(BaseModel):
    where: str  # PCI:0000:61:00
    code: int
    text: str  # the rest of the driver's line


def count_pci_gpus(text: str) -> int:
    """How many NVIDIA GPUs (3D/VGA controllers) `lspci -d 10de:` lists."""
    return sum(1 for line in text.splitlines() if _GPU_FUNCTION.search(line))


def parse_xid_lines(text: str) -> list[XidEvent] | None:
    """The Xid lines of the kernel log; None when the log could not be read."""
    if NOT_PERMITTED in text:
        return None
    events = []
    for line in text.splitlines():
        if match := _XID.search(line):
            events.append(
                XidEvent(where=match["where"], code=int(match["code"]), text=match["rest"])
            )
    return events
