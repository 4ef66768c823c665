"""The probe's sections: what each one runs, and what one tool printed (stderr merged) + status."""

from __future__ import annotations

from dataclasses import dataclass

from tools.recon.installed_packages import INSTALLED_PACKAGES_COMMAND
from tools.wall.denied import COULD_NOT_READ, denied_line


@dataclass(frozen=True)
class Section:
    name: str
    output: str
    exit_status: int | None
    walled: bool = False  # it ran inside the wall (tools/wall/)

    @property
    def missing(self) -> bool:
        """The tool or file is absent or not permitted: the fact is unknown, not an error."""
        from tools.recon.parsers.missing import is_tool_missing  # the parsers load with facts

        return is_tool_missing(self.output, self.exit_status)

    def problem(self) -> str:
        """A one-line reason this section gave no fact, quoting what the tool said."""
        denied = denied_line(self.output)
        if denied is not None:  # whatever else it printed is not the whole truth
            said = COULD_NOT_READ if self.walled else "could not read"
            return f"{self.name} {said}: {denied[:160]}"
        first = next((line.strip() for line in self.output.splitlines() if line.strip()), "")
        said = f": {first[:160]}" if first else " (no output)"
        if self.exit_status is None:
            return f"{self.name} was cut off before it finished{said}"
        return f"{self.name} exited {self.exit_status}{said}"


PIP_LIST_CAP_BYTES = 300_000
GPU_QUERY_FIELDS = (
    "index,name,uuid,driver_version,memory.total,memory.used,memory.free,"
    "utilization.gpu,temperature.gpu,power.draw"
)
# One line per cached model (tools/recon/parsers/hf_cache.py): folder, `du -sb` bytes ("-"
# without du), the commit refs/main names, whether its snapshot folder exists, and how many
# blobs/*.incomplete an unfinished download left.
HF_MODELS_COMMAND = (
    'for d in "$HOME"/.cache/huggingface/hub/models--*; do if [ -d "$d" ]; then '
    'r=; if [ -f "$d/refs/main" ]; then r=$(cat "$d/refs/main"); fi; '
    's=no; if [ -n "$r" ] && [ -d "$d/snapshots/$r" ]; then s=yes; fi; '
    'n=; for f in "$d"/blobs/*.incomplete; do if [ -e "$f" ]; then n=$n.; fi; done; '
    'set -- $(du -sb "$d"); '
    'echo "model ${d##*/} ${1:--} main=${r:--} snapshot=$s incomplete=${#n}"; fi; done'
)
FABRIC_TESTS_COMMAND = (
    'if [ -x "$HOME/nccl-tests/build/all_gather_perf" ]; then echo nccl-tests; fi; '
    "command -v ib_write_bw || true"
)

# spark-vllm-docker's recipes folder and how many recipe files it holds, when it is checked out
DEPLOY_KITS_COMMAND = (
    'd="$HOME/spark-vllm-docker/recipes"; if [ -d "$d" ]; then echo "$d"; n=; '
    'for f in "$d"/*.yaml; do if [ -e "$f" ]; then n=$n.; fi; done; echo "${#n}"; '
    "else echo absent; fi"
)

# (section name, shell command). Commands may use pipes and builtins, never file redirections.
SECTIONS: tuple[tuple[str, str], ...] = (
    ("hostname", "hostname"),
    ("uname", "uname -a"),
    ("os-release", "cat /etc/os-release"),
    ("dgx-release", "cat /etc/dgx-release"),
    ("lsb-release", "cat /etc/lsb-release"),
    ("lscpu", "lscpu"),
    ("meminfo", "cat /proc/meminfo"),
    ("free", "free -b"),
    ("hf-cache", 'if [ -d "$HOME/.cache/huggingface" ]; then echo present; else echo absent; fi'),
    ("hf-models", HF_MODELS_COMMAND),
    (
        "df",
        'if [ -d "$HOME/.cache/huggingface" ]; then df -B1 / "$HOME/.cache/huggingface"; '
        "else df -B1 /; fi",
    ),
    ("nvidia-smi", "nvidia-smi"),
    ("nvidia-smi-list", "nvidia-smi -L"),
    ("nvidia-smi-query", f"nvidia-smi --query-gpu={GPU_QUERY_FIELDS} --format=csv"),
    ("nvidia-smi-topo", "nvidia-smi topo -m"),
    # what the PCI bus holds, whatever the driver sees (NVIDIA's vendor id 10de)
    ("lspci-nvidia", "lspci -d 10de:"),
    # the driver's Xid errors, where the kernel log is readable without root (dmesg_restrict=0)
    ("xid", "dmesg | grep -a 'NVRM: Xid' | tail -n 20"),
    ("earlyoom", "pgrep -x earlyoom || true"),
    ("nvcc", "nvcc --version"),
    (
        "cuda-nvcc",
        "if [ -x /usr/local/cuda/bin/nvcc ]; then echo present; else echo absent; fi",
    ),
    ("docker-version", "docker version"),
    ("docker-info", "docker info"),
    ("docker-ps", "docker ps -a --no-trunc --format '{{json .}}'"),
    ("docker-images", "docker images --format '{{json .}}'"),
    ("docker-stats", "timeout 20 docker stats --no-stream --format '{{json .}}'"),
    (
        "docker-pids",
        "docker ps -q | while read id; do "
        "docker inspect --format '{{.Name}} {{.State.Pid}}' \"$id\"; done",
    ),
    ("groups", "id -nG"),
    ("ibdev2netdev", "ibdev2netdev"),
    ("rdma-link", "rdma link show"),
    # each RDMA device and its GID table, for NCCL_IB_GID_INDEX (tools/recon/parsers/gids.py)
    ("ibv-gids", "ibv_devinfo -v | grep -E 'hca_id|GID'"),
    ("ip-addr", "ip -j addr"),
    # at most two short lines: `nccl-tests` where its build is, ib_write_bw's path if installed
    ("fabric-tests", FABRIC_TESTS_COMMAND),
    ("deploy-kits", DEPLOY_KITS_COMMAND),
    ("python", "python3 --version"),
    # `pip list --format json`'s answer from package metadata, without pip's index check
    ("pip", f"{INSTALLED_PACKAGES_COMMAND} | head -c {PIP_LIST_CAP_BYTES}"),
    ("ss", "ss -tlnp"),
    ("ray", "timeout 15 ray status"),
)


# Each part of the probe (inside the wall, beside it: OUTSIDE_SECTIONS) runs these groups at the
# same time, the sections of a group one after another, and the sections no group names as one
# more group (tools/recon/probe.py): about as long as its slowest group, not the sum of all. A
# few groups, not one per section: on a busy two-core host forty processes at once cost more
# than they overlap. Outermost first: a group that hangs holds back the groups before it, never
# those after, so those that wait on others come first.
SECTION_GROUPS: tuple[frozenset[str], ...] = (
    # `docker stats --no-stream` answers only after the daemon's stats collector has sampled
    # twice, one second apart (moby/moby#40437 and #40478: "roughly 2s"): the longest section
    # where the daemon is up, so it starts at once, not after DAEMON_CHECK (see NEEDS_DAEMON)
    frozenset({"docker-stats"}),
    # they wait on dockerd, the GPU driver or ray's GCS, and hang when it does
    frozenset(
        {
            "docker-version",
            "docker-info",
            "docker-ps",
            "docker-images",
            "docker-pids",
            "nvidia-smi",
            "nvidia-smi-list",
            "nvidia-smi-query",
            "nvidia-smi-topo",
            "ray",
        }
    ),
    frozenset({"python", "pip"}),  # each starts an interpreter
)
# The docker sections whose facts are read only where the daemon answered: readers/docker.py
# reads containers, images, stats and PIDs only where Docker is usable, that is where `docker
# version` printed the daemon's own version, and takes only the daemon's runtimes from `docker
# info`. `docker version` prints the daemon's part only where it reached the daemon, and then
# it exits 0 (docker/cli's runVersion returns the daemon's error after printing the client's
# part). Where it exits otherwise, each of these would start the docker CLI only to print the
# same error, four processes (five with `docker ps -q`) for no fact: the probe runs them only
# after DAEMON_CHECK exited 0 (tools/recon/probe.py). `docker stats` is not among them: where
# the daemon is up it is the probe's longest section, and waiting for DAEMON_CHECK would make
# every such probe longer by a `docker version`; where it is down it costs one process.
DAEMON_CHECK = "docker-version"
NEEDS_DAEMON = frozenset({"docker-info", "docker-ps", "docker-images", "docker-pids"})
# Sections whose facts would be false inside the wall: docker's reads need its daemon's socket
# (the wall closes every Unix socket), `ss -p` names processes only where it may read their
# /proc entries (Landlock keeps a walled process from other domains' entries), and the kernel
# log needs CAP_SYSLOG where dmesg_restrict=1; `ray status` reaches the GCS on the address
# it was started with, often the node's own, which the wall's address filter does not pass.
# They are Scout's own fixed reads: the probe runs them beside the walled part, outside it
# (tools/recon/probe.py).
OUTSIDE_SECTIONS = frozenset(
    {"docker-version", "docker-info", "docker-ps", "docker-images", "docker-stats",
     "docker-pids", "ss", "xid", "ray"}
)  # fmt: skip


def command_for(name: str) -> str:
    """The command a section ran, for provenance (`ethtool IF` sections are built per netdev)."""
    if name.startswith("ethtool "):
        return f"ethtool {name.removeprefix('ethtool ')}"
    return dict(SECTIONS).get(name, name)
