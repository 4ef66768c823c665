"""`lscpu`: architecture and CPU count; GB10 lists two core types (Cortex-X925 + Cortex-A725)."""

from pydantic import BaseModel, computed_field

from tools.recon.parsers.errors import ParseError
from tools.recon.parsers.units import parse_optional_float, parse_optional_int


class CpuCoreType(BaseModel):
    """One `Model name` block; hybrid chips print one per core type."""

    model_name: str
    cores_per_socket: int | None = None
    sockets: int | None = None
    threads_per_core: int | None = None
    max_mhz: float | None = None


class LscpuInfo(BaseModel):
    architecture: str | None = None
    cpu_count: int | None = None
    online_cpus: str | None = None
    vendor_id: str | None = None
    core_types: list[CpuCoreType]

    @computed_field
    @property
    def model_names(self) -> list[str]:
        return [core.model_name for core in self.core_types]


_CORE_FIELDS = {
    "Core(s) per socket": ("cores_per_socket", parse_optional_int),
    "Core(s) per cluster": ("cores_per_socket", parse_optional_int),
    "Socket(s)": ("sockets", parse_optional_int),
    "Thread(s) per core": ("threads_per_core", parse_optional_int),
    "CPU max MHz": ("max_mhz", parse_optional_float),
}


def parse_lscpu(text: str) -> LscpuInfo:
    """Read `lscpu` (indented or flat); lines after a `Model name` belong to that core type."""
    top: dict[str, str] = {}
    core_types: list[CpuCoreType] = []
    for line in text.splitlines():
        key, sep, value = line.strip().partition(":")
        if not sep:
            continue
        key, value = key.strip(), value.strip()
        if key == "Model name":
            core_types.append(CpuCoreType(model_name=value))
        elif core_types and key in _CORE_FIELDS:
            name, convert = _CORE_FIELDS[key]
            if getattr(core_types[-1], name) is None:
                setattr(core_types[-1], name, convert(value))
        else:
            top.setdefault(key, value)
    if "Architecture" not in top and not core_types:
        raise ParseError("`lscpu` output ('Architecture:', 'CPU(s):', 'Model name:')", text)
    return LscpuInfo(
        architecture=top.get("Architecture"),
        cpu_count=parse_optional_int(top.get("CPU(s)", "")),
        online_cpus=top.get("On-line CPU(s) list"),
        vendor_id=top.get("Vendor ID"),
        core_types=core_types,
    )
