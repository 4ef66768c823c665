"""`nvidia-smi --query-gpu=… --format=csv[,noheader][,nounits]`.

Unsupported values (`[N/A]`, `[Not Supported]`) become None: on GB10 that is every memory field.
"""

import re
from collections.abc import Sequence

from pydantic import BaseModel

from tools.recon.parsers.errors import ParseError

QueryValue = int | float | str | None

_HEADER_UNIT = re.compile(r"^(?P<field>[A-Za-z_][\w.]*)(?:\s*\[(?P<unit>[^\]]+)\])?$")
_VALUE_UNIT = re.compile(r"^(?P<number>-?\d+(?:\.\d+)?)(?:\s*(?:%|[KMG]?i?B|W|MHz|C|KB/s))?$")
_PLAIN_FIELDS = {"index", "name", "uuid", "serial", "count", "timestamp", "driver_version"}
_PLAIN_FIELDS |= {"pid", "process_name", "used_gpu_memory", "used_memory", "gpu_uuid", "gpu_name"}
_UNSUPPORTED = {"[N/A]", "N/A", "[Not Supported]", "Not Supported", "[Unknown Error]", ""}


class NvidiaSmiQueryResult(BaseModel):
    """One row per GPU, keyed by query field; `units` comes from the header when it has one."""

    fields: list[str]
    units: dict[str, str]
    rows: list[dict[str, QueryValue]]


def parse_nvidia_smi_query_csv(
    text: str, fields: Sequence[str] | None = None
) -> NvidiaSmiQueryResult:
    """Read query CSV with or without its header, with or without units.

    `fields` names the columns when the header is absent (`noheader`); when a header is present
    it must name the same columns. Numbers become int/float with their unit stripped, except in
    fields that hold versions (a driver `580.142` is not a float).
    """
    lines = [line for line in text.splitlines() if line.strip()]
    if not lines:
        raise ParseError("`nvidia-smi --query-gpu` CSV rows", text)
    header = _read_header(lines[0])
    wanted = [field.strip() for field in fields] if fields is not None else None
    if header is not None:
        names = list(header)
        if wanted is not None and [n.lower() for n in names] != [w.lower() for w in wanted]:
            raise ParseError(f"a CSV header naming {', '.join(wanted)}", lines[0])
        lines = lines[1:]
        units = {name: unit for name, unit in header.items() if unit}
    elif wanted is not None:
        names, units = wanted, {}
    else:
        raise ParseError(
            "a CSV header", text, "Pass the query fields when the output has no header."
        )
    rows = [_read_row(line, names) for line in lines]
    return NvidiaSmiQueryResult(fields=names, units=units, rows=rows)


def _read_header(line: str) -> dict[str, str | None] | None:
    """Field → unit when `line` is a header row, else None."""
    header: dict[str, str | None] = {}
    for cell in line.split(","):
        match = _HEADER_UNIT.match(cell.strip())
        if match is None:
            return None
        header[match["field"]] = match["unit"]
    # field names without a dot exist too (`compute_cap`); one known name is enough
    if not any("." in field or field in _PLAIN_FIELDS for field in header):
        return None
    return header


def _read_row(line: str, names: list[str]) -> dict[str, QueryValue]:
    cells = [cell.strip() for cell in line.split(",")]
    if len(cells) != len(names):
        raise ParseError(f"{len(names)} comma-separated values per row ({', '.join(names)})", line)
    return {name: _convert(name, cell) for name, cell in zip(names, cells, strict=True)}


def _convert(name: str, cell: str) -> QueryValue:
    if cell in _UNSUPPORTED:
        return None
    if "version" in name:
        return cell
    match = _VALUE_UNIT.match(cell)
    if match is None:
        return cell
    number = match["number"]
    return float(number) if "." in number else int(number)
