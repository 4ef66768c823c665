"""From the probe's sections to `HostFacts`, using the committed parsers for every format.

A section whose tool is missing, refused, or printed something unreadable leaves its facts None
and says why in the group's `problem`; it never fails the host.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from datetime import datetime
from typing import TypeVar

from tools.recon import parsers as p
from tools.recon.facts import (
    INFERENCE_PACKAGES,
    INFERENCE_PORTS,
    Container,
    CpuFacts,
    Disk,
    DiskFacts,
    DockerFacts,
    FactGroup,
    Gpu,
    GpuFacts,
    GpuProcessFact,
    HostFacts,
    IdentityFacts,
    Image,
    InferenceServer,
    Interface,
    MemoryFacts,
    ModelCacheFacts,
    NetworkFacts,
    OsFacts,
    Provenance,
    PythonFacts,
    RdmaFacts,
    RdmaPort,
    ServiceFacts,
    ToolkitFacts,
)
from tools.recon.sections import Section, command_for

T = TypeVar("T")
MIB = 1024**2
ENGINE_WORDS = ("vllm", "sglang", "ray", "trtllm", "tensorrt", "tgi", "llama")


class _Reader:
    """Parses one section at a time, recording provenance and problems on the fact group."""

    def __init__(self, host: str, sections: Mapping[str, Section], collected_at: datetime) -> None:
        self.host = host
        self.sections = sections
        self.collected_at = collected_at

    def read(self, group: FactGroup, name: str, parser: Callable[[str], T]) -> T | None:
        section = self.sections.get(name)
        if section is None:
            self._note(group, f"{name} did not run (the probe stopped before it)")
            return None
        group.sources.append(
            Provenance(
                host=self.host,
                command=command_for(name),
                collected_at=self.collected_at,
                exit_status=section.exit_status,
            )
        )
        if section.missing:
            self._note(group, section.problem())
            return None
        try:
            return parser(section.output)
        except p.ParseError as exc:
            self._note(group, f"{name}: {exc}")
            return None

    def output(self, name: str) -> str | None:
        section = self.sections.get(name)
        return section.output if section is not None else None

    @staticmethod
    def _note(group: FactGroup, problem: str) -> None:
        group.problem = problem if group.problem is None else f"{group.problem}; {problem}"


def facts_from_sections(
    host: str, sections: Mapping[str, Section], collected_at: datetime
) -> HostFacts:
    reader = _Reader(host, sections, collected_at)
    facts = HostFacts(host=host, collected_at=collected_at)
    facts.identity = _identity(reader)
    facts.os = _os(reader)
    facts.cpu = _cpu(reader)
    facts.gpu, unified, gpu_memory = _gpu(reader)
    facts.memory = _memory(reader, unified, gpu_memory)
    facts.toolkit = _toolkit(reader)
    facts.disk = _disk(reader)
    facts.hf_cache = _hf_cache(reader)
    facts.docker = _docker(reader, facts.gpu)
    facts.rdma = _rdma(reader)
    facts.network = _network(reader, facts.rdma)
    facts.python = _python(reader)
    facts.services = _services(reader, facts.docker)
    return facts


def _identity(reader: _Reader) -> IdentityFacts:
    group = IdentityFacts()
    hostname = reader.read(group, "hostname", lambda text: text.strip().splitlines()[0])
    uname = reader.read(group, "uname", p.parse_uname_a)
    group.hostname = hostname or (uname.hostname if uname else None)
    if uname is not None:
        group.arch, group.kernel = uname.machine, uname.kernel_release
    return group


def _os(reader: _Reader) -> OsFacts:
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
        group.sources.append(_source(reader, "dgx-release"))
        group.dgx_name = dgx.name
        group.dgx_swbuild_version = dgx.swbuild_version
        group.dgx_ota_version = dgx.ota_version
        group.dgx_ota_date = dgx.ota_date
    return group


def _source(reader: _Reader, name: str) -> Provenance:
    section = reader.sections[name]
    return Provenance(
        host=reader.host,
        command=command_for(name),
        collected_at=reader.collected_at,
        exit_status=section.exit_status,
    )


def _cpu(reader: _Reader) -> CpuFacts:
    group = CpuFacts()
    lscpu = reader.read(group, "lscpu", p.parse_lscpu)
    if lscpu is not None:
        group.cpu_count, group.model_names = lscpu.cpu_count, lscpu.model_names
    return group


def _gpu(reader: _Reader) -> tuple[GpuFacts, bool, tuple[int | None, int | None]]:
    """GPU facts, whether memory is unified, and (GPU total, GPU free) bytes when discrete."""
    group = GpuFacts()
    table = reader.read(group, "nvidia-smi", p.parse_nvidia_smi_table)
    listing = reader.read(group, "nvidia-smi-list", p.parse_nvidia_smi_list) or []
    query = reader.read(group, "nvidia-smi-query", p.parse_nvidia_smi_query_csv)
    uuids = {entry.index: entry.uuid for entry in listing}
    rows = {row.get("index"): row for row in (query.rows if query else [])}
    if table is not None:
        group.driver_version, group.cuda_version = table.driver_version, table.cuda_version
        group.processes = [
            GpuProcessFact(
                pid=proc.pid,
                name=proc.name,
                memory_bytes=proc.memory_used_mib * MIB if proc.memory_used_mib else None,
            )
            for proc in table.processes
        ]
        for info in table.gpus:
            row = rows.get(info.index, {})
            total = _mib(row.get("memory.total")) or _mib(info.memory_total_mib)
            used = _mib(row.get("memory.used")) or _mib(info.memory_used_mib)
            group.gpus.append(
                Gpu(
                    index=info.index,
                    name=info.name,
                    uuid=uuids.get(info.index),
                    bus_id=info.bus_id,
                    memory_total_bytes=total,
                    memory_used_bytes=used,
                    memory_supported=info.memory_supported and total is not None,
                )
            )
    elif listing:
        group.gpus = [Gpu(index=e.index, name=e.name, uuid=e.uuid) for e in listing]
    if group.driver_version is None and query is not None and query.rows:
        group.driver_version = _str(query.rows[0].get("driver_version"))
    unified = any(not gpu.memory_supported or "GB10" in gpu.name for gpu in group.gpus)
    totals = [gpu.memory_total_bytes for gpu in group.gpus if gpu.memory_total_bytes]
    used = [gpu.memory_used_bytes or 0 for gpu in group.gpus if gpu.memory_total_bytes]
    gpu_total = sum(totals) if totals and not unified else None
    gpu_free = gpu_total - sum(used) if gpu_total is not None else None
    return group, unified, (gpu_total, gpu_free)


def _mib(value: object) -> int | None:
    return int(value) * MIB if isinstance(value, int | float) and value else None


def _str(value: object) -> str | None:
    return str(value) if value is not None else None


def _memory(
    reader: _Reader, unified: bool, gpu_memory: tuple[int | None, int | None]
) -> MemoryFacts:
    group = MemoryFacts(unified_memory=unified)
    group.gpu_total_bytes, group.gpu_free_bytes = gpu_memory
    meminfo = reader.read(group, "meminfo", p.parse_meminfo)
    if meminfo is not None:
        group.total_bytes = meminfo.total_bytes
        group.available_bytes = meminfo.available_bytes
        group.free_bytes = meminfo.free_bytes
        return group
    free = reader.read(group, "free", p.parse_free)
    if free is not None:
        group.total_bytes = free.memory.total_bytes
        group.available_bytes = free.memory.available_bytes
        group.free_bytes = free.memory.free_bytes
    return group


def _toolkit(reader: _Reader) -> ToolkitFacts:
    group = ToolkitFacts()
    section = reader.sections.get("nvcc")
    if section is not None:
        group.sources.append(_source(reader, "nvcc"))
        try:
            nvcc = p.parse_nvcc_version(section.output, section.exit_status)
        except p.ParseError as exc:
            group.problem = f"nvcc: {exc}"
        else:
            group.nvcc_on_path, group.nvcc_version = nvcc.present, nvcc.version
    marker = reader.read(group, "cuda-nvcc", lambda text: text.strip())
    if marker in ("present", "absent"):
        group.cuda_nvcc_present = marker == "present"
    return group


def _disk(reader: _Reader) -> DiskFacts:
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
    marker = reader.read(group, "hf-cache", lambda text: text.strip())
    if marker in ("present", "absent"):
        group.hf_cache_present = marker == "present"
    return group


def _hf_cache(reader: _Reader) -> ModelCacheFacts:
    """Listed models even when `du` is missing or failed: then their sizes stay None."""
    group = ModelCacheFacts()
    section = reader.sections.get("hf-models")
    if section is None:
        group.problem = "hf-models did not run (the probe stopped before it)"
        return group
    group.sources.append(_source(reader, "hf-models"))
    listed = p.parse_hf_cache_listing(section.output)
    group.models = {m.repo_id: m.size_bytes for m in listed}
    unsized = [m.repo_id for m in listed if m.size_bytes is None]
    if unsized:
        said = [line for line in section.output.splitlines() if not line.startswith("model ")]
        reason = said[0].strip()[:160] if said else f"exit status {section.exit_status}"
        group.problem = f"no size for {', '.join(unsized)} (du said: {reason})"
    elif section.exit_status is None:
        group.problem = section.problem()
    return group


def _docker(reader: _Reader, gpu: GpuFacts) -> DockerFacts:
    group = DockerFacts()
    section = reader.sections.get("docker-version")
    access = p.docker_access_problem(section.output, section.exit_status) if section else None
    if section is not None and access is not None and access.kind != "daemon_unreachable":
        group.sources.append(_source(reader, "docker-version"))
        group.permission_denied = access.kind == "permission_denied"
        group.installed, group.usable = group.permission_denied, False
        group.problem = access.line if group.permission_denied else section.problem()
    else:
        version = reader.read(group, "docker-version", p.parse_docker_version)
        if version is not None:
            group.installed = True
            group.client_version = version.client_version
            group.server_version = version.server_version
            group.usable = version.server_version is not None
            group.problem = version.server_error
    info = reader.read(DockerFacts(), "docker-info", p.parse_docker_info)
    if info is not None:
        group.runtimes = info.runtimes
    groups = reader.read(group, "groups", lambda text: text.split())
    if groups is not None:
        group.user_groups = groups
        group.in_docker_group = "docker" in groups
    if group.usable:
        group.containers = _containers(reader, group, gpu)
        group.images = reader.read(group, "docker-images", _images) or []
    return group


def _containers(reader: _Reader, group: DockerFacts, gpu: GpuFacts) -> list[Container]:
    listed = reader.read(group, "docker-ps", p.parse_docker_ps_json) or []
    stats = {row.name: row for row in reader.read(FactGroup(), "docker-stats", _stats) or []}
    pids = reader.read(FactGroup(), "docker-pids", _container_pids) or {}
    gpu_memory = {proc.pid: proc.memory_bytes for proc in gpu.processes if proc.memory_bytes}
    containers = []
    for entry in listed:
        name = entry.names[0] if entry.names else (entry.id or "?")
        container = Container(
            name=name, image=entry.image, state=entry.state, status=entry.status, ports=entry.ports
        )
        if name in stats and stats[name].memory_used_bytes and entry.state == "running":
            container.memory_bytes = stats[name].memory_used_bytes
            container.memory_source = "docker stats"
            group.sources.append(_source(reader, "docker-stats"))
        elif pids.get(name) in gpu_memory:
            container.memory_bytes = gpu_memory[pids[name]]
            container.memory_source = "nvidia-smi process of the container"
        containers.append(container)
    return containers


def _stats(text: str) -> list[p.ContainerStats]:
    if "is not a docker command" in text or "not simulated" in text:
        raise p.ParseError("`docker stats` output", text)
    return p.parse_docker_stats_json(text)


def _container_pids(text: str) -> dict[str, int]:
    pids = {}
    for line in text.splitlines():
        words = line.split()
        if len(words) == 2 and words[0].startswith("/") and words[1].isdigit():
            pids[words[0].lstrip("/")] = int(words[1])
    return pids


def _images(text: str) -> list[Image]:
    return [
        Image(repository=i.repository, tag=i.tag, id=i.id or None, size=i.size)
        for i in p.parse_docker_images_json(text)
    ]


def _rdma(reader: _Reader) -> RdmaFacts:
    group = RdmaFacts()
    links = reader.read(group, "rdma-link", p.parse_rdma_link_show)
    if links:
        group.ports = [
            RdmaPort(
                device=link.device,
                port=link.port,
                state=link.state,
                physical_state=link.physical_state,
                netdev=link.netdev,
                up=link.is_up,
            )
            for link in links
        ]
        return group
    entries = reader.read(group, "ibdev2netdev", p.parse_ibdev2netdev) or []
    group.ports = [
        RdmaPort(device=e.device, port=e.port, state=e.state, netdev=e.netdev, up=e.is_up)
        for e in entries
    ]
    return group


def _network(reader: _Reader, rdma: RdmaFacts) -> NetworkFacts:
    group = NetworkFacts()
    fabric = {port.netdev for port in rdma.ports if port.netdev}
    interfaces = reader.read(group, "ip-addr", p.parse_ip_j_addr) or []
    for nic in interfaces:
        if nic.name == "lo" or nic.name.startswith(("veth", "br-", "docker")):
            continue
        speed = None
        ethtool_name = f"ethtool {nic.name}"
        if ethtool_name in reader.sections:
            info = reader.read(group, ethtool_name, p.parse_ethtool)
            speed = info.speed_mbps if info else None
        group.interfaces.append(
            Interface(
                name=nic.name,
                state=nic.state,
                mtu=nic.mtu,
                addresses=[f"{a.address}/{a.prefix_len}" for a in nic.addresses],
                speed_mbps=speed,
                fabric=nic.name in fabric,
                link_local_only=nic.link_local_only,
                carrier=nic.has_carrier if "UP" in nic.flags else None,
            )
        )
    return group


def _python(reader: _Reader) -> PythonFacts:
    group = PythonFacts()
    version = reader.read(group, "python", p.parse_python_version)
    group.version = version.version if version else None
    packages = reader.read(group, "pip", p.parse_pip_list_json) or []
    group.packages = {
        pkg.name.lower(): pkg.version for pkg in packages if pkg.name.lower() in INFERENCE_PACKAGES
    }
    return group


def _services(reader: _Reader, docker: DockerFacts) -> ServiceFacts:
    group = ServiceFacts()
    sockets = reader.read(group, "ss", p.parse_ss_listening) or []
    group.listening_ports = sorted({sock.port for sock in sockets})
    unclaimed = [port for port in group.listening_ports if port in INFERENCE_PORTS]
    for container in docker.containers:
        if container.state != "running":
            continue
        haystack = f"{container.name} {container.image}".lower()
        kind = next((word for word in ENGINE_WORDS if word in haystack), None)
        if kind is None:
            continue
        port = next((port for port in unclaimed if kind in INFERENCE_PORTS[port]), None)
        if port is not None:
            unclaimed.remove(port)
        group.inference_servers.append(
            InferenceServer(kind=kind, port=port, container=container.name)
        )
    group.inference_servers += [
        InferenceServer(kind=INFERENCE_PORTS[port], port=port) for port in unclaimed
    ]
    ray_section = reader.sections.get("ray")
    if ray_section is not None and not ray_section.missing:
        status = reader.read(group, "ray", p.parse_ray_status)
        if status is not None:
            group.ray_running, group.ray_nodes = status.running, status.node_count
    return group
