"""The host itself: identity, OS and DGX release, CPU, CUDA toolkit, disks, HF cache, Python."""

from __future__ import annotations

from tools.recon import parsers as p
from tools.recon.readers.section_reader import SectionReader
from tools.world.facts import (
    INFERENCE_PACKAGES,
    CacheCopy,
    CpuFacts,
    Disk,
    DiskFacts,
    IdentityFacts,
    ModelCacheFacts,
    OsFacts,
    PythonFacts,
    ToolkitFacts,
)


def read_identity(reader: SectionReader) -> IdentityFacts:
    group = IdentityFacts()
    hostname = reader.read(group, "hostname", lambda text: text.strip().splitlines()[0])
    uname = reader.read(group, "uname", p.parse_uname_a)
    group.hostname = hostname or (uname.hostname if uname else None)
    if uname is not None:
        group.arch, group.kernel = uname.machine, uname.kernel_release
    return group


def read_os(reader: SectionReader) -> OsFacts:
    group = OsFacts()
    os_release = reader.read(group, "os-release", p.parse_os_release)
    if os_release is not None:
        group.pretty_name = os_release.pretty_name
        group.version_id = os_release.version_id
        group.codename = os_release.version_codename
    else:
        lsb = reader.read(group, "lsb-release", p.parse_lsb_release)
        if lsb is not None:
            group.pretty_name, group.version_id = lsb.description, lsb.release
            group.codename = lsb.codename
    dgx = reader.read(OsFacts(), "dgx-release", p.parse_dgx_release)
    if dgx is not None:
        group.sources.append(reader.source("dgx-release"))
        group.dgx_name = dgx.name
        group.dgx_swbuild_version = dgx.swbuild_version
        group.dgx_ota_version = dgx.ota_version
        group.dgx_ota_date = dgx.ota_date
    return group


def read_cpu(reader: SectionReader) -> CpuFacts:
    group = CpuFacts()
    lscpu = reader.read(group, "lscpu", p.parse_lscpu)
    if lscpu is not None:
        group.cpu_count, group.model_names = lscpu.cpu_count, lscpu.model_names
    return group


def read_toolkit(reader: SectionReader) -> ToolkitFacts:
    group = ToolkitFacts()
    section = reader.sections.get("nvcc")
    if section is not None:
        group.sources.append(reader.source("nvcc"))
        try:
            nvcc = p.parse_nvcc_version(section.output, section.exit_status)
        except p.ParseError as exc:
            group.problem = f"nvcc: {exc}"
        else:
            group.nvcc_on_path, group.nvcc_version = nvcc.present, nvcc.version
    group.cuda_nvcc_present = reader.marker(group, "cuda-nvcc")
    return group


def read_disk(reader: SectionReader) -> DiskFacts:
    group = DiskFacts()
    rows = reader.read(group, "df", p.parse_df) or []
    seen: set[str] = set()
    for row in rows:
        if row.mounted_on not in seen:
            seen.add(row.mounted_on)
            group.disks.append(
                Disk(
                    mount=row.mounted_on,
                    filesystem=row.filesystem,
                    size_bytes=row.size_bytes,
                    available_bytes=row.available_bytes,
                )
            )
    group.hf_cache_present = reader.marker(group, "hf-cache")
    return group


def read_hf_cache(reader: SectionReader) -> ModelCacheFacts:
    """Listed models even when `du` is missing or failed: then their sizes stay None. A line
    in another shape leaves the whole listing unknown, with the line quoted."""
    group = ModelCacheFacts()
    section = reader.sections.get("hf-models")
    if section is None:
        group.problem = "hf-models did not run (the probe stopped before it)"
        return group
    group.sources.append(reader.source("hf-models"))
    try:
        listed = p.parse_hf_cache_listing(section.output)
    except p.ParseError as exc:
        group.problem = f"hf-models: {exc}"
        return group
    group.models = {m.repo_id: m.size_bytes for m in listed}
    group.copies = {
        m.repo_id: CacheCopy(
            revision=m.revision, snapshot=m.snapshot, incomplete_blobs=m.incomplete_blobs
        )
        for m in listed
    }
    unsized = [m.repo_id for m in listed if m.size_bytes is None]
    if unsized:
        said = [line for line in section.output.splitlines() if not line.startswith("model ")]
        reason = said[0].strip()[:160] if said else f"exit status {section.exit_status}"
        group.problem = f"no size for {', '.join(unsized)} (du said: {reason})"
    elif section.exit_status is None:
        group.problem = section.problem()
    return group


def read_python(reader: SectionReader) -> PythonFacts:
    group = PythonFacts()
    version = reader.read(group, "python", p.parse_python_version)
    group.version = version.version if version else None
    packages = reader.read(group, "pip", p.parse_pip_list_json) or []
    group.packages = {
        pkg.name.lower(): pkg.version for pkg in packages if pkg.name.lower() in INFERENCE_PACKAGES
    }
    return group
