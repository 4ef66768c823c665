"""What recon knows about one host, typed, each group saying which command it came from and when.

A value of None means "unknown" (the tool was missing, refused or printed something unreadable);
the group's `problem` then says why. Nothing here guesses.

Built while `scout recon`'s host runs the probe, so built the way pydantic builds fastest
(tests/unit/test_recon_model_build.py), as are the parsers' models: an empty list or mapping is
a field's default as written (`= []`; pydantic gives each model its own copy), not a builtin
`default_factory`, whose signature pydantic would parse from text; and the annotations are not
postponed (no `from __future__ import annotations`), so pydantic need not evaluate each field's
type from its text. Each cost recon's models 25 to 30 ms.
"""

from datetime import datetime

from pydantic import BaseModel, Field, computed_field

INFERENCE_PACKAGES = ("vllm", "sglang", "torch", "ray", "transformers", "flashinfer-python")
INFERENCE_PORTS = {8000: "vllm/openai", 30000: "sglang", 6379: "ray gcs", 8265: "ray dashboard"}


class Provenance(BaseModel):
    """Where a fact came from: the command as sent, the host, when, and how it exited."""

    host: str
    command: str
    collected_at: datetime
    exit_status: int | None = None


class FactGroup(BaseModel):
    sources: list[Provenance] = []
    problem: str | None = None


class IdentityFacts(FactGroup):
    hostname: str | None = None
    arch: str | None = None
    kernel: str | None = None


class OsFacts(FactGroup):
    pretty_name: str | None = None
    version_id: str | None = None
    codename: str | None = None
    dgx_name: str | None = None
    dgx_swbuild_version: str | None = None
    dgx_ota_version: str | None = None
    dgx_ota_date: str | None = None


class CpuFacts(FactGroup):
    cpu_count: int | None = None
    model_names: list[str] = []


class MemoryFacts(FactGroup):
    """On unified memory (GB10) the GPU's budget is MemAvailable; otherwise it is GPU memory.
    A host where no GPU was seen has no budget for a model: its RAM is not GPU memory."""

    total_bytes: int | None = None
    available_bytes: int | None = None
    free_bytes: int | None = None
    unified_memory: bool = False
    gpu_total_bytes: int | None = None
    gpu_free_bytes: int | None = None
    swap_total_bytes: int | None = None
    swap_used_bytes: int | None = None  # swap in use on a Spark means memory was already short
    gpu_count: int | None = None  # GPUs seen; 0 when nvidia-smi shows none or is missing
    earlyoom_running: bool | None = None  # it kills the biggest process when memory runs low

    @computed_field
    @property
    def budget_bytes(self) -> int | None:
        """Memory a model can use on this host (None without a GPU, or when unknown)."""
        if self.gpu_count == 0:
            return None
        if self.unified_memory or self.gpu_total_bytes is None:
            return self.available_bytes
        return self.gpu_free_bytes


class Gpu(BaseModel):
    index: int
    name: str
    uuid: str | None = None
    bus_id: str | None = None
    memory_total_bytes: int | None = None
    memory_used_bytes: int | None = None
    memory_supported: bool = True
    faulted: bool = False  # nvidia-smi reads ERR! in its cells: the driver lost it
    mig_mode: str | None = None  # "Enabled", "Disabled"; None where MIG does not exist
    mig_instances: list[str] = []  # profiles, e.g. ["3g.40gb", …]


class GpuProcessFact(BaseModel):
    """A process on the GPU. `memory_cut`: nvidia-smi cut the value (`10707...`), so the
    memory it holds is unknown (`memory_bytes` None) though the process surely holds some."""

    pid: int
    name: str
    memory_bytes: int | None = None
    memory_cut: bool = False


class GpuFacts(FactGroup):
    driver_version: str | None = None
    cuda_version: str | None = None
    gpus: list[Gpu] = []
    processes: list[GpuProcessFact] = []
    # how the GPUs reach each other (`nvidia-smi topo -m`): "nvlink", "pcie", "mixed"; None with
    # one GPU or unknown; `interconnect_detail` says it as a person would ("NV18 between all 8")
    interconnect: str | None = None
    interconnect_detail: str | None = None
    unreachable: list[str] = []  # the driver's line per GPU it lost
    pci_gpus: int | None = None  # NVIDIA GPUs lspci lists (None: lspci not read)
    gpus_before: int | None = None  # more GPUs an earlier probe saw (set by the world model)
    xid_events: list[str] = []  # kernel log `NVRM: Xid` lines (last)


class ToolkitFacts(FactGroup):
    """`nvcc_on_path` False with `cuda_nvcc_present` True is the stock Spark: PATH lacks CUDA."""

    nvcc_on_path: bool | None = None
    nvcc_version: str | None = None
    cuda_nvcc_present: bool | None = None


class Disk(BaseModel):
    mount: str
    filesystem: str
    size_bytes: int
    available_bytes: int


class DiskFacts(FactGroup):
    disks: list[Disk] = []
    hf_cache_present: bool | None = None


class CacheCopy(BaseModel):
    """How whole a cached model is, by the Hub cache's layout: the commit `refs/main` names
    (None: no refs/main), whether `snapshots/<commit>/` exists, `blobs/*.incomplete` left."""

    revision: str | None = None
    snapshot: bool = False
    incomplete_blobs: int = 0


class ModelCacheFacts(FactGroup):
    """Models in ~/.cache/huggingface/hub by Hub id, with bytes on disk (None: `du` gave none),
    and per model its revision and leftovers (`copies`).

    `models` is None when the listing did not run; an empty dict means no model is cached.
    """

    models: dict[str, int | None] | None = None
    copies: dict[str, CacheCopy] = {}


class Container(BaseModel):
    name: str
    image: str
    state: str | None = None
    status: str | None = None
    ports: str | None = None
    memory_bytes: int | None = None
    memory_source: str | None = None
    started_by_scout: str | None = Field(
        default=None,
        description="Not probed: set by the world model when Scout created this container "
        "itself (which action did); Scout's own work is never a finding against it.",
    )


class ImageContents(BaseModel):
    """What an image can run, probed by running it: versions, None where the package is absent."""

    ray: str | None = None
    vllm: str | None = None
    sglang: str | None = None
    nccl: str | None = None  # what its torch links (torch.cuda.nccl.version()); None: unknown
    # which binary of it: the version string NCCL compiles in and the library's ELF build ID
    # (`2.28.9+cuda13.0 build-id a7f4…`, tools/deploy/proof/node_identity.py); None: not asked
    nccl_build: str | None = None

    def words(self) -> str:
        """`vllm 0.19.1+nv26.05, nccl 2.28.9, no ray/sglang`: what it holds first (an unknown
        NCCL is not said: it is not an engine the image lacks)."""
        found = self.model_dump(exclude={"nccl_build"})
        held = [f"{name} {v}" for name, v in found.items() if v]
        absent = "/".join(name for name, v in found.items() if not v and name != "nccl")
        return ", ".join([*held, *([f"no {absent}"] if absent else [])])


class Image(BaseModel):
    repository: str
    tag: str | None = None
    id: str | None = None
    size: str | None = None
    contents: ImageContents | None = None  # None: not probed


class DockerFacts(FactGroup):
    """`usable` False with `permission_denied` True means: add the user to the docker group."""

    installed: bool | None = None
    usable: bool | None = None
    permission_denied: bool = False
    client_version: str | None = None
    server_version: str | None = None
    runtimes: list[str] = []
    in_docker_group: bool | None = None
    user_groups: list[str] = []
    containers: list[Container] = []
    images: list[Image] = []


class RdmaPort(BaseModel):
    device: str
    port: int
    state: str | None = None
    physical_state: str | None = None
    netdev: str | None = None
    up: bool
    link_layer: str | None = None  # "InfiniBand" (a LID from the subnet manager) or "Ethernet"

    @property
    def infiniband(self) -> bool:
        return self.link_layer == "InfiniBand"


class RoceGidEntry(BaseModel):
    """A port's RoCE v2 GID of an IPv4 address (`ibv_devinfo -v`): NCCL_IB_GID_INDEX's value."""

    device: str
    index: int
    ipv4: str


class RdmaFacts(FactGroup):
    """An empty `ports` list with no problem: no RDMA device (on a Spark, maybe no cable)."""

    ports: list[RdmaPort] = []
    roce_v2_ipv4_gids: list[RoceGidEntry] = []


class Interface(BaseModel):
    name: str
    state: str | None = None
    mtu: int | None = None
    addresses: list[str] = []
    speed_mbps: int | None = None
    fabric: bool = False
    link_local_only: bool = False
    carrier: bool | None = None  # False: up but NO-CARRIER (no cable); None: admin down/unknown


class NetworkFacts(FactGroup):
    interfaces: list[Interface] = []


class FabricTestFacts(FactGroup):
    """Which fabric benchmark this node can run (None: recon could not tell). A fresh Spark has
    neither: NVIDIA's NCCL playbook builds nccl-tests into ~/nccl-tests/build, perftest's
    ib_write_bw comes from `sudo apt install perftest` (docs/sources.md §1.3, §2.2)."""

    nccl_tests: bool | None = None
    perftest: bool | None = None


class DeployKitFacts(FactGroup):
    """A checkout of spark-vllm-docker on the host (`~/spark-vllm-docker/recipes`): its recipes
    can be handed to plan_deployment as `recipe_file=HOST:PATH` (tools/deploy/recipe_book)."""

    spark_vllm_docker: str | None = None  # the recipes folder
    recipes: int | None = None  # top-level recipe files in it

    def words(self, host: str) -> str:
        """` · spark-vllm-docker recipes: …` for the host's line, or nothing."""
        if not self.spark_vllm_docker:
            return ""
        count = f" ({self.recipes} recipes)" if self.recipes is not None else ""
        return (
            f" · spark-vllm-docker at {self.spark_vllm_docker}{count}: plan_deployment "
            f"recipe_file={host}:{self.spark_vllm_docker}/NAME.yaml"
        )


class PythonFacts(FactGroup):
    version: str | None = None
    packages: dict[str, str] = {}


class InferenceServer(BaseModel):
    """Something that looks like an inference engine: a known port or an engine container."""

    kind: str
    port: int | None = None
    container: str | None = None


class ServiceFacts(FactGroup):
    listening_ports: list[int] = []
    inference_servers: list[InferenceServer] = []
    ray_running: bool | None = None
    ray_nodes: int | None = None
    ray_gpus_used: float | None = None  # of the cluster's GPUs, held by tasks/placement groups
    ray_gpus_total: float | None = None


class WallFacts(FactGroup):
    """Whether this host's reads run inside Scout's wall (tools/wall/), and what its kernel
    offers: the probe pack itself runs inside it where it can."""

    inside: bool | None = None  # the probe pack ran inside the wall
    detail: str | None = None  # the wall's parts, or why there is none
    kernel: str | None = None
    landlock_abi: int | None = None  # the ABI the wall was built on (known when inside)
    seccomp: bool | None = None
    helper: bool | None = None  # Scout's helper is cached on the host

    def sentence(self) -> str:
        if self.inside:
            return f"reads run inside the wall ({self.detail})"
        return f"reads are not walled: {self.detail or self.problem or 'unknown'}"


class HostFacts(BaseModel):
    """Everything one probe round learned about one host."""

    host: str
    collected_at: datetime
    identity: IdentityFacts = Field(default_factory=IdentityFacts)
    os: OsFacts = Field(default_factory=OsFacts)
    cpu: CpuFacts = Field(default_factory=CpuFacts)
    memory: MemoryFacts = Field(default_factory=MemoryFacts)
    gpu: GpuFacts = Field(default_factory=GpuFacts)
    toolkit: ToolkitFacts = Field(default_factory=ToolkitFacts)
    disk: DiskFacts = Field(default_factory=DiskFacts)
    hf_cache: ModelCacheFacts = Field(default_factory=ModelCacheFacts)
    docker: DockerFacts = Field(default_factory=DockerFacts)
    rdma: RdmaFacts = Field(default_factory=RdmaFacts)
    network: NetworkFacts = Field(default_factory=NetworkFacts)
    fabric_tests: FabricTestFacts = Field(default_factory=FabricTestFacts)
    kits: DeployKitFacts = Field(default_factory=DeployKitFacts)
    python: PythonFacts = Field(default_factory=PythonFacts)
    services: ServiceFacts = Field(default_factory=ServiceFacts)
    wall: WallFacts = Field(default_factory=WallFacts)
