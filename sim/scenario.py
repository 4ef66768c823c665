"""Scenarios: what a simulated cluster looks like, as typed data loaded from YAML.

A scenario file may `extends:` another one and override parts of it; `defaults:` are merged under
every host, so a file only spells out what differs. Mappings merge key by key, lists are replaced,
and `null` removes a key (a container, a NIC) that the parent defined.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Literal

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError

SCENARIO_DIR = Path(__file__).parent / "scenarios"


class ScenarioError(Exception):
    """A scenario cannot be found or does not describe a valid cluster."""


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid")


class Nic(_Model):
    """One network device; `up` is the admin state, `cable` whether a link partner is there.

    `cx7` is a ConnectX port in Ethernet mode (RoCE); `ib` is the IPoIB netdev of a ConnectX
    port in InfiniBand mode, whose `mac` holds the port GUID (8 bytes) and `lid` its LID.
    """

    index: int
    kind: Literal["loopback", "ethernet", "wifi", "cx7", "ib", "bridge"]
    mac: str
    mtu: int = 1500
    up: bool = True
    cable: bool = True
    addresses: list[str] = Field(default_factory=list)
    link_local_v6: bool = True
    altname: str | None = None
    speed_mbps: int | None = None
    rdma_dev: str | None = None
    pci: str | None = None
    lid: int | None = None
    extra_gids: list[str] = Field(default_factory=list)  # IPv6 GIDs before the IPv4 ones


class GpuProcess(_Model):
    pid: int
    type: Literal["G", "C"] = "G"
    name: str
    memory_mib: int
    gpu: int = 0  # index of the GPU it runs on


class RayCluster(_Model):
    """A Ray cluster running outside any container: its nodes and GPUs, `gpus_used` held."""

    nodes: int = 2
    gpus: float = 2.0
    gpus_used: float = 2.0


class Gpu(_Model):
    """The host's GPUs: `count` alike, on `bus_ids` (the first is `bus_id`), UUIDs numbered from
    `uuid`. `memory_total_mib` None is GB10's unified memory (`Not Supported` / `[N/A]`)."""

    name: str = "NVIDIA GB10"
    count: int = 1
    bus_ids: list[str] = Field(default_factory=list)
    memory_total_mib: int | None = None
    memory_reserved_mib: int = 0
    power_cap_w: int | None = None
    ecc_errors: str = "N/A"
    mig_mode: str = "N/A"
    compute_cap: str = "12.1"
    clocks_sm_mhz: int = 2418
    architecture: str = "Blackwell"
    brand: str = "NVIDIA RTX"
    driver: str = "580.95.05"
    cuda: str = "13.0"
    uuid: str
    bus_id: str = "0000000F:01:00.0"
    serial: str = "1234567890123"
    temp_c: int = 41
    power_w: float = 4.5
    util_pct: int = 0
    perf: str = "P8"
    display_active: bool = False
    processes: list[GpuProcess] = Field(default_factory=list)
    link: str | None = None  # several GPUs: `nvidia-smi topo -m`'s cell between them (NV18)
    faulted: list[int] = Field(default_factory=list)  # GPUs that read ERR! (lost after an Xid)
    unreachable: list[int] = Field(default_factory=list)  # GPUs the driver cannot reach
    fallen: list[int] = Field(default_factory=list)  # GPUs gone from nvidia-smi, still on PCI
    mig_instances: list[str] = Field(default_factory=list)  # MIG on GPU 0: instance profiles


class Memory(_Model):
    """Unified memory as Linux sees it; running containers add their `memory_kb` to `used_kb`."""

    total_kb: int = 127600748
    used_kb: int
    cache_kb: int = 2516582
    buffers_kb: int = 105536
    shared_kb: int = 5427
    swap_total_kb: int = 16777212
    swap_used_kb: int = 0


class Disk(_Model):
    filesystem: str
    fstype: str = "ext4"
    size_kb: int
    used_kb: int
    mount: str


class Image(_Model):
    """An image; `tools` are the engine packages inside it with their versions (vllm, ray,
    sglang), what `pip show`/`--version` answer in a container of it. An engine that is not
    listed is absent: NGC's vLLM 26.05 ships without Ray (docs/sources.md §2.3, NVIDIA's playbook
    pip-installs `ray[default]` before `ray start`)."""

    repository: str
    tag: str = "latest"
    id: str
    created: str = "2 months ago"
    size: str = "1GB"
    run_memory_kb: int = 1048576
    tools: dict[str, str] = Field(default_factory=dict)
    # the NCCL its torch links (`torch.cuda.nccl.version()`), where it has an engine: by default
    # the one Sparks' engines log (docs/sources.md §8, `NCCL version 2.28.9+cuda13.0`)
    nccl: str = "2.28.9"
    # which build of it: the library's version string (`NCCL version 2.28.9+cuda13.0`, what NCCL
    # compiles into itself) and its ELF build ID; one version ships as different binaries (the
    # pip wheel and DGX OS's libnccl2, vLLM issue #41725)
    nccl_build: str = "2.28.9+cuda13.0 build-id c0db9360e4b1a7d2"
    # the one architecture it was built for, where it was built for one: on another host's, its
    # binaries cannot run (a Spark is aarch64, an amd64-only build exits at once:
    # openchangelog#21, mhddos_proxy#33). None: a multi-platform image whose manifest list holds
    # the host's, as NGC's vLLM images are published for both arm64 and amd64
    platform: Literal["linux/arm64", "linux/amd64"] | None = None
    # how a bad build of the engine fails once it is started (fakehost/serve_defects.py)
    defect: Literal["weights", "stall", "gibberish"] | None = None


class Container(_Model):
    id: str
    image: str
    command: str
    state: Literal["running", "exited", "created"] = "running"
    up_for_s: int = 60
    exit_code: int = 0
    memory_kb: int = 0
    ports: str = ""
    listen: list[int] = Field(default_factory=list)
    logs: str = ""
    gpu_process: GpuProcess | None = None


class Docker(_Model):
    installed: bool = True
    socket_access: bool = True
    version: str = "29.2.1"
    api_version: str = "1.52"
    runtimes: list[str] = Field(default_factory=lambda: ["io.containerd.runc.v2", "runc"])
    images: list[Image] = Field(default_factory=list)
    pullable: list[Image] = Field(default_factory=list)  # what a `docker pull` would find
    containers: dict[str, Container] = Field(default_factory=dict)
    # simulated seconds a `docker build` takes (fakehost/docker_build.py): the runner image of
    # spark-vllm-docker from prebuilt wheels takes tens of minutes
    build_s: float = Field(1800.0, gt=0)


class Listener(_Model):
    address: str
    port: int
    process: str = ""


# a Hub commit id, as refs/main holds it (huggingface.co/docs/hub/local-cache)
COMMIT = r"^[0-9a-f]{40}$"


class CachedModel(_Model):
    """A model in the host's Hugging Face cache (~/.cache/huggingface), laid out as the Hub
    client does (sim/fakehost/hfcache.py). `revision`: the commit its refs/main names (None: the
    Hub's default for the model); it lives on disk only, as on a real host. `partial`: a download
    stopped part way — `size_gb` of it arrived and one blob is left as `<hash>.incomplete`."""

    size_gb: float
    revision: str | None = Field(default=None, pattern=COMMIT, exclude=True)
    partial: bool | None = None


class Rates(_Model):
    """How fast a served model streams, how long the sim lets engines wait before failing, and
    how fast long work goes: downloads from the Hub and registries, copies between hosts.

    `time_scale` compresses the clock of that long work (downloads, pulls, copies, engines
    loading): simulated seconds per real second, so a 20-minute download can take a second in a
    test while its progress lines still show the simulated rates and times.
    """

    roce_tok_s: float = 30.0  # two Sparks, FP8, TP=2 (inference-atlas PR #112)
    socket_tok_s: float = 6.0
    ttft_s: float = 0.48  # its TTFT p50
    join_timeout_s: float = 2.0
    placement_timeout_s: float = 2.0
    download_mb_s: float = 100.0
    copy_mb_s: float = 1000.0
    time_scale: float = Field(1.0, gt=0)


class HubModel(_Model):
    """A model repository on the Hugging Face Hub, as `hf download` finds it."""

    size_gb: float
    files: int = Field(1, ge=1)
    gated: bool = False  # downloads need HF_TOKEN
    revision: str | None = Field(default=None, pattern=COMMIT)  # main's commit; None: default


class Generation(_Model):
    """How a served model generates, beyond its speed: trouble that a healthy `/v1/models` hides.

    `dead`: the engine core died or froze while the API server lives on: /health and /v1/models
    answer 200, a completion is accepted and never finishes (vLLM issue #39863; a GB10 backend
    frozen behind a 200 from /v1/models, azrtydxb/Fastllm-proxy issue #19). `recall_tokens`: past
    this many prompt tokens the model no longer finds what the prompt holds, though the engine
    accepts up to --max-model-len (Qwen's model cards: beyond the native context without YaRN
    rope scaling, quality falls apart).
    """

    dead: bool = False
    recall_tokens: int | None = None
    # the engine wedges once this many requests were served while `stall_concurrency` or more
    # were in flight (sim/engine/stall.py; vLLM issue #41725)
    stall_after: int | None = Field(default=None, ge=1)
    stall_concurrency: int = Field(default=2, ge=1)


class Faults(_Model):
    """Injected trouble: seconds added to every command, host down, commands that hang or drop."""

    latency_s: float = 0.0
    down: bool = False
    hang: str | None = None
    drop: str | None = None


class PeerSsh(_Model):
    """What this host's own ssh client may do to its peers. NVIDIA's connect-two-sparks playbook
    (docs/sources.md §2.1 step 3, `discover-sparks`) copies one shared key to every node found on
    the fabric, which also records each peer's host key; a host set up otherwise lacks one or
    both (§6 failure mode 22: `Host key verification failed`). None: every peer, every address.
    """

    known_hosts: list[str] | None = None  # names/addresses whose host key ~/.ssh/known_hosts has
    authorized_on: list[str] | None = None  # peers (hostnames) whose authorized_keys has our key


class FabricTests(_Model):
    """The fabric benchmarks a host has. A fresh Spark has neither (docs/sources.md §1.3, §2.2):
    nccl-tests is built from source into ~/nccl-tests/build by NVIDIA's NCCL playbook (`make
    MPI=1`), perftest (`ib_write_bw`) comes from `sudo apt install perftest`."""

    nccl_tests: bool = False
    perftest: bool = False


class Host(_Model):
    role: Literal["head", "worker"]
    address: str
    port: int = 22
    hostname: str
    arch: str = "aarch64"
    kernel: str
    kernel_build: str
    cpus: int = 20
    cpu_model: str | None = None  # None: GB10's Cortex-X925 + Cortex-A725 clusters
    cpu_sockets: int = 1
    hca_firmware: str = "28.45.4028"
    files: dict[str, str] = Field(default_factory=dict)
    memory: Memory
    gpu: Gpu
    disks: list[Disk] = Field(default_factory=list)
    nvcc_on_path: bool = False
    fabric_tests: FabricTests = Field(default_factory=FabricTests)
    docker: Docker = Field(default_factory=Docker)
    nics: dict[str, Nic] = Field(default_factory=dict)
    listeners: list[Listener] = Field(default_factory=list)
    groups: list[str] = Field(default_factory=list)
    python_version: str = "3.12.3"
    pip_packages: dict[str, str] = Field(default_factory=dict)
    hf_cache: dict[str, CachedModel] = Field(default_factory=dict)
    hub: dict[str, HubModel] = Field(default_factory=dict)  # what the Hub serves to this host
    # False: no route to the internet (the seed's worker, reached only through the head): pulls,
    # downloads and pip installs fail to resolve their hosts instead of finding nothing.
    internet: bool = True
    # False: a kernel without Landlock (before 5.13, or booted without it in lsm=): what a
    # command calls landlock_create_ruleset finds ENOSYS (fakehost/confinement.py), so Scout's
    # wall cannot stand there and its reads narrow (tools/wall/narrow.py).
    landlock: bool = True
    rates: Rates = Field(default_factory=Rates)
    faults: Faults = Field(default_factory=Faults)
    kernel_log: list[str] = Field(default_factory=list)  # what `dmesg` prints (NVRM Xid lines)
    earlyoom: bool = False  # earlyoom runs (`pgrep -x earlyoom` finds it)
    ray_cluster: RayCluster | None = None  # a Ray cluster left running on the host itself
    generation: Generation = Field(default_factory=Generation)
    peer_ssh: PeerSsh = Field(default_factory=PeerSsh)


class Scenario(_Model):
    name: str
    description: str = ""
    user: str = "aurora"
    hosts: dict[str, Host]

    @property
    def head(self) -> str:
        """Name of the one host reachable directly (role head)."""
        return next(name for name, host in self.hosts.items() if host.role == "head")


def list_scenarios() -> list[str]:
    """Names of the scenarios shipped with the simulator."""
    return sorted(p.stem for p in SCENARIO_DIR.glob("*.yaml") if not p.stem.startswith("_"))


def load_scenario(name_or_path: str | Path) -> Scenario:
    """Load a shipped scenario by name, or any scenario file by path."""
    raw = _load_raw(_resolve(name_or_path), seen=())
    defaults = raw.pop("defaults", {}) or {}
    raw.pop("extends", None)
    hosts = raw.get("hosts") or {}
    raw["hosts"] = {name: _deep_merge(defaults, spec or {}) for name, spec in hosts.items()}
    try:
        scenario = Scenario.model_validate(raw)
    except ValidationError as exc:
        raise ScenarioError(f"scenario {name_or_path!s} is invalid:\n{exc}") from None
    heads = [n for n, h in scenario.hosts.items() if h.role == "head"]
    if len(heads) != 1:
        raise ScenarioError(f"scenario {scenario.name} needs exactly one head host, found {heads}")
    return scenario


def _resolve(name_or_path: str | Path) -> Path:
    path = Path(name_or_path)
    if path.suffix in (".yaml", ".yml") or path.exists():
        if not path.is_file():
            raise ScenarioError(f"scenario file {path} does not exist")
        return path
    shipped = SCENARIO_DIR / f"{name_or_path}.yaml"
    if not shipped.is_file():
        names = ", ".join(list_scenarios())
        raise ScenarioError(f"unknown scenario {name_or_path!r}; choose one of: {names}")
    return shipped


def _load_raw(path: Path, seen: tuple[Path, ...]) -> dict[str, Any]:
    if path in seen:
        raise ScenarioError(f"scenario {path} extends itself (via {', '.join(map(str, seen))})")
    try:
        data = yaml.safe_load(path.read_text()) or {}
    except yaml.YAMLError as exc:
        raise ScenarioError(f"scenario {path} is not valid YAML: {exc}") from None
    if not isinstance(data, dict):
        raise ScenarioError(f"scenario {path} must be a mapping at the top level")
    parent = data.get("extends")
    if parent is None:
        return data
    base = _load_raw(_resolve_parent(path, parent), seen=(*seen, path))
    base.pop("name", None)
    base.pop("description", None)
    return _deep_merge(base, {k: v for k, v in data.items() if k != "extends"})


def _resolve_parent(child: Path, parent: str) -> Path:
    sibling = child.parent / f"{parent}.yaml"
    return sibling if sibling.is_file() else _resolve(parent)


def _deep_merge(base: dict[str, Any], override: dict[str, Any]) -> dict[str, Any]:
    merged = dict(base)
    for key, value in override.items():
        if value is None:
            merged.pop(key, None)
        elif isinstance(value, dict) and isinstance(merged.get(key), dict):
            merged[key] = _deep_merge(merged[key], value)
        else:
            merged[key] = value
    return merged
