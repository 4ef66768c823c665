"""`nvcc --version`: which CUDA toolkit is on PATH, if any (a stock Spark has none on PATH)."""

import re

from pydantic import BaseModel

from tools.recon.parsers.errors import ParseError
from tools.recon.parsers.missing import is_tool_missing

_RELEASE = re.compile(r"release (?P<release>\d+\.\d+), V(?P<version>[\d.]+)")
_BUILD = re.compile(r"^Build (?P<build>\S+)", re.MULTILINE)


class NvccInfo(BaseModel):
    present: bool
    release: str | None = None
    version: str | None = None
    build: str | None = None


def parse_nvcc_version(text: str, exit_status: int | None = None) -> NvccInfo:
    """Read `nvcc --version`; 'command not found' or empty output means no nvcc on PATH."""
    match = _RELEASE.search(text)
    if match is not None:
        build = _BUILD.search(text)
        return NvccInfo(
            present=True,
            release=match["release"],
            version=match["version"],
            build=build["build"] if build else None,
        )
    if not text.strip() or is_tool_missing(text, exit_status):
        return NvccInfo(present=False)
    raise ParseError("`nvcc --version` output ('Cuda compilation tools, release X.Y')", text)
