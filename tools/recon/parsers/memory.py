"""`/proc/meminfo` and `free`: the real memory budget (on GB10 the GPU shares it)."""

import re

from pydantic import BaseModel

from tools.recon.parsers.errors import ParseError
from tools.recon.parsers.units import parse_size_bytes

_MEMINFO_LINE = re.compile(r"^(?P<key>[\w()]+):\s+(?P<number>\d+)(?:\s+(?P<unit>kB))?\s*$")
KIB = 1024


class MemInfo(BaseModel):
    """Byte values of the lines recon reads; `values` keeps every line (kB lines in bytes)."""

    total_bytes: int | None = None
    available_bytes: int | None = None
    free_bytes: int | None = None
    buffers_bytes: int | None = None
    cached_bytes: int | None = None
    swap_total_bytes: int | None = None
    swap_free_bytes: int | None = None
    values: dict[str, int]


def parse_meminfo(text: str) -> MemInfo:
    """Read `/proc/meminfo`, whole or a grep of it (kB means KiB)."""
    values: dict[str, int] = {}
    for line in text.splitlines():
        match = _MEMINFO_LINE.match(line.strip())
        if match is not None:
            number = int(match["number"])
            values[match["key"]] = number * KIB if match["unit"] else number
    if not values:
        raise ParseError("/proc/meminfo lines like 'MemTotal: 127600748 kB'", text)
    return MemInfo(
        total_bytes=values.get("MemTotal"),
        available_bytes=values.get("MemAvailable"),
        free_bytes=values.get("MemFree"),
        buffers_bytes=values.get("Buffers"),
        cached_bytes=values.get("Cached"),
        swap_total_bytes=values.get("SwapTotal"),
        swap_free_bytes=values.get("SwapFree"),
        values=values,
    )


class FreeRow(BaseModel):
    total_bytes: int
    used_bytes: int | None = None
    free_bytes: int | None = None
    shared_bytes: int | None = None
    buff_cache_bytes: int | None = None
    available_bytes: int | None = None


class FreeReport(BaseModel):
    memory: FreeRow
    swap: FreeRow | None = None


_FREE_COLUMNS = {
    "total": "total_bytes",
    "used": "used_bytes",
    "free": "free_bytes",
    "shared": "shared_bytes",
    "buff/cache": "buff_cache_bytes",
    "available": "available_bytes",
}


def parse_free(text: str) -> FreeReport:
    """Read `free -b` (plain numbers are bytes) or `free -h` (Gi/Mi/… binary units).

    Older procps prints `buffers` and `cached` columns; they are added into `buff_cache_bytes`.
    """
    lines = [line.split() for line in text.splitlines() if line.strip()]
    header = next((words for words in lines if words and words[0] == "total"), None)
    rows = {words[0]: words[1:] for words in lines if words[0] in ("Mem:", "Swap:")}
    if header is None or "Mem:" not in rows:
        raise ParseError("`free` output with a 'total used free' header and a 'Mem:' row", text)
    memory = _free_row(header, rows["Mem:"], text)
    swap = _free_row(header, rows["Swap:"], text) if "Swap:" in rows else None
    return FreeReport(memory=memory, swap=swap)


def _free_row(header: list[str], cells: list[str], text: str) -> FreeRow:
    try:
        values = {name: parse_size_bytes(cell) for name, cell in zip(header, cells, strict=False)}
    except ParseError:
        raise ParseError("`free` rows of sizes", text) from None
    fields = {_FREE_COLUMNS[name]: value for name, value in values.items() if name in _FREE_COLUMNS}
    if "buffers" in values or "cached" in values:
        fields["buff_cache_bytes"] = values.get("buffers", 0) + values.get("cached", 0)
    return FreeRow(**fields)
