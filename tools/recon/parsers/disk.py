"""`df` (room for ~119 GB of weights plus images) and `du -sb` (how much a folder holds)."""

import re

from pydantic import BaseModel

from tools.recon.parsers.errors import ParseError
from tools.recon.parsers.units import parse_size_bytes

_DU_ROW = re.compile(r"^\s*(?P<size>\d+)\s+(?P<path>.+?)\s*$")
_BLOCK_SIZES = {
    "1K-blocks": 1024,
    "1B-blocks": 1,
    "1-blocks": 1,
    "1M-blocks": 1024**2,
    "1024-blocks": 1024,
}


class DiskUsage(BaseModel):
    filesystem: str
    fs_type: str | None = None
    size_bytes: int
    used_bytes: int
    available_bytes: int
    use_percent: int | None
    mounted_on: str


def parse_df(text: str) -> list[DiskUsage]:
    """Read `df -h`, plain `df` (1K blocks), `df -B1` or `df -T`; wrapped long names are joined."""
    lines = [line for line in text.splitlines() if line.strip()]
    if not lines or not lines[0].startswith("Filesystem"):
        raise ParseError("`df` output starting with a 'Filesystem' header", text)
    header = lines[0].split()
    has_type = len(header) > 1 and header[1] == "Type"
    size_column = header[2] if has_type else header[1]
    block_bytes = _BLOCK_SIZES.get(size_column)
    entries = []
    pending: list[str] = []
    for line in lines[1:]:
        words = pending + line.split()
        if len(words) < (7 if has_type else 6):
            pending = words
            continue
        pending = []
        entries.append(_entry(words, has_type, block_bytes, text))
    return entries


def _entry(words: list[str], has_type: bool, block_bytes: int | None, text: str) -> DiskUsage:
    fs_type = words.pop(1) if has_type else None
    filesystem, size, used, available, percent, *mount = words

    def to_bytes(cell: str) -> int:
        return int(cell) * block_bytes if block_bytes is not None else parse_size_bytes(cell)

    try:
        return DiskUsage(
            filesystem=filesystem,
            fs_type=fs_type,
            size_bytes=to_bytes(size),
            used_bytes=to_bytes(used),
            available_bytes=to_bytes(available),
            use_percent=int(percent.rstrip("%")) if percent.rstrip("%").isdigit() else None,
            mounted_on=" ".join(mount),
        )
    except (ParseError, ValueError):
        raise ParseError("`df` rows of sizes", text) from None


class FolderSize(BaseModel):
    path: str
    size_bytes: int


def parse_du_sb(text: str) -> list[FolderSize]:
    """The `SIZE<tab>PATH` rows of `du -sb` output; anything else (its complaints) is skipped."""
    return [
        FolderSize(path=match["path"], size_bytes=int(match["size"]))
        for line in text.splitlines()
        if (match := _DU_ROW.match(line))
    ]
