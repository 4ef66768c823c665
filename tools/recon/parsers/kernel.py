"""`uname -a`: kernel release and machine architecture."""

from pydantic import BaseModel

from tools.recon.parsers.errors import ParseError

_ARCHITECTURES = {
    "aarch64", "arm64", "x86_64", "amd64", "i686", "i386", "armv7l", "armv8l",
    "ppc64le", "ppc64", "s390x", "riscv64", "unknown",
}  # fmt: skip


class UnameInfo(BaseModel):
    kernel_name: str
    hostname: str
    kernel_release: str
    kernel_version: str
    machine: str
    operating_system: str | None = None


def parse_uname_a(text: str) -> UnameInfo:
    """Read `uname -a`; processor and platform fields (omitted when unknown) are skipped."""
    words = text.strip().splitlines()[0].split() if text.strip() else []
    if len(words) < 5:
        raise ParseError("`uname -a` output ('Linux HOST RELEASE #VERSION … ARCH GNU/Linux')", text)
    operating_system = None if words[-1] in _ARCHITECTURES else words.pop()
    end = len(words)
    while end > 3 and words[end - 1] in _ARCHITECTURES:
        end -= 1
    if end == len(words):
        raise ParseError("`uname -a` output naming a machine architecture", text)
    return UnameInfo(
        kernel_name=words[0],
        hostname=words[1],
        kernel_release=words[2],
        kernel_version=" ".join(words[3:end]),
        machine=words[end],
        operating_system=operating_system,
    )
