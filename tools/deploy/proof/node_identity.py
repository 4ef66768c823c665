"""What each node of one engine runs, and whether the nodes agree: image (ID and registry digest),
engine version, the NCCL build its engine loads, GPU driver and HCA firmware.

One NCCL version ships as different binaries: the pip wheel `nvidia-nccl-cu13` and DGX OS's
`libnccl2` are both 2.28.9 but differ (219 MB, ELF build ID `a7f420a1…` against 190 MB,
`c0db9360…`), and TP=2 across two Sparks that load different ones hung after 20-26 minutes of
4-way load; the same setup with the OS's build on both served a 60-minute soak, 420 of 420
(vLLM issues #41725 and #42354). So the build is identified, not the version: NCCL compiles
`NCCL version X.Y.Z<suffix>+cudaA.B` into itself "so that running `strings` on the lib can quickly
reveal the version" (NCCL src/init.cc, VERSION_STRING), and the linker writes a GNU build ID
note. The library read is the one the engine loads: vLLM's pynccl opens `libnccl.so.2` by name
(vllm find_nccl_library), which after `import torch` is the copy torch already mapped, so the
probe opens it the same way and reads its path from /proc/self/maps.

Unknown is never agreement (DESIGN rule 16): a node whose value was not read is said, and no
disagreement is built on it.
"""

from __future__ import annotations

import asyncio
import re
import shlex
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass

from tools.ssh.errors import SSHError
from tools.ssh.pool import SSHPool
from tools.world.facts import HostFacts
from tools.world.findings import Finding

READ_TIMEOUT_S = 60.0

# The loaded libnccl: its path, the version string compiled into it, its GNU build ID (an ELF
# note: namesz 4, descsz 20, type 3 NT_GNU_BUILD_ID, "GNU\0", then the 20-byte SHA-1).
BUILD_CODE = (
    "import ctypes, re, torch; ctypes.CDLL('libnccl.so.2'); "
    "p = next((l.split()[-1] for l in open('/proc/self/maps') if 'libnccl' in l), None); "
    "b = open(p, 'rb').read() if p else b''; "
    "v = re.search(rb'NCCL version [0-9][^\\x00\\s]*', b); "
    "i = re.search(rb'\\x04\\x00\\x00\\x00\\x14\\x00\\x00\\x00\\x03\\x00\\x00\\x00GNU"
    "\\x00(.{20})', b, re.S); "
    "print('NCCL version', '.'.join(map(str, torch.cuda.nccl.version()))); "
    "print('NCCL build', p, v.group().decode() if v else 'NCCL version unknown', "
    "'build-id', i.group(1).hex() if i else 'unknown')"
)
_BUILD = re.compile(
    r"^NCCL build (?P<path>\S+) NCCL version (?P<version>\S+) build-id (?P<id>[0-9a-f]+)\s*$", re.M
)
FIX_NCCL = (
    "use the same NCCL build on every node, the OS's (`libnccl2`) on all of them: vLLM issue "
    "#41725 (TP=2 on two Sparks hung after 20-26 min under 4-way load with two builds of 2.28.9; "
    "with the OS's build on both a 60-minute soak served 420 of 420)"
)
UNKNOWN = "unknown"
COMPARED = {
    "image_id": ("image", "the image; the plan copies the head's image to the others"),
    "engine_version": ("engine version", "use one image on every node"),
    "nccl_build": ("NCCL build", FIX_NCCL),
    "driver": ("GPU driver", "install one driver version on every node (the DGX OS update)"),
    "firmware": ("HCA firmware", "update the ConnectX firmware to one version on every node"),
}


@dataclass
class NodeIdentity:
    """What one node runs; `unknown` where it was not read."""

    image: str = UNKNOWN
    image_id: str = UNKNOWN
    image_digest: str = UNKNOWN
    engine_version: str = UNKNOWN
    nccl_build: str = UNKNOWN
    nccl_library: str = UNKNOWN
    driver: str = UNKNOWN
    firmware: str = UNKNOWN

    def data(self) -> dict[str, str]:
        return asdict(self)


def parse_build(text: str) -> tuple[str, str] | None:
    """(build, library path) from the probe's `NCCL build …` line: the build is the compiled
    version string and the build ID (`2.28.9+cuda13.0 build-id a7f420a1…`)."""
    found = _BUILD.search(text)
    if found is None or found["id"] == UNKNOWN:
        return None
    return f"{found['version']} build-id {found['id']}", found["path"]


def identity_command(container: str) -> str:
    """One read-only line for a node: the engine container's image (its ID and registry
    digests), the NCCL build its engine loads, the driver, the HCA firmware; each part marked,
    each allowed to fail alone."""
    name = shlex.quote(container)
    parts = [
        "echo '@@image'",
        f"ref=$(docker inspect --format '{{{{.Config.Image}}}}' {name} 2>/dev/null)",
        'echo "ref $ref"',
        "docker image inspect --format '{{.Id}} {{json .RepoDigests}}' \"$ref\" 2>/dev/null",
        "echo '@@nccl'",
        f"docker exec {name} python3 -c {shlex.quote(BUILD_CODE)} 2>&1",
        "echo '@@engine'",
        f"docker exec {name} python3 -m pip show vllm sglang 2>/dev/null",
    ]
    parts += [
        "echo '@@driver'",
        "nvidia-smi --query-gpu=driver_version --format=csv,noheader 2>/dev/null | head -1",
        "echo '@@firmware'",
        "{ cat /sys/class/infiniband/*/fw_ver 2>/dev/null || ibstat 2>/dev/null | "
        "awk -F': ' '/Firmware version/ {print $2}'; } | sort -u | head -1",
    ]
    return "; ".join(parts)


def parse_identity(text: str, into: NodeIdentity) -> NodeIdentity:
    """Fill `into` from what `identity_command` printed; parts that said nothing stay."""
    sections: dict[str, str] = {}
    name = ""
    for line in text.splitlines():
        if line.startswith("@@"):
            name = line[2:].strip()
            sections[name] = ""
        elif name:
            sections[name] += line + "\n"
    ref, _, rest = sections.get("image", "").partition("\n")
    if ref.startswith("ref ") and ref[4:].strip():
        into.image = ref[4:].strip()
    image = rest.split(None, 1)
    if image and image[0].startswith("sha256:"):
        into.image_id = image[0]
        listed = image[1].strip() if len(image) > 1 else ""
        digests = re.findall(r'"([^"]+@sha256:[0-9a-f]+)"', listed)
        if digests:
            into.image_digest = digests[0]
        elif listed == "[]":
            into.image_digest = "none (built or loaded here, not pulled from a registry)"
    engine = re.search(r"^Name: (\S+)\s*\nVersion: (\S+)", sections.get("engine", ""), re.M)
    if engine:
        into.engine_version = f"{engine[1].lower()} {engine[2]}"
    if build := parse_build(sections.get("nccl", "")):
        into.nccl_build, into.nccl_library = build
    for key in ("driver", "firmware"):
        said = sections.get(key, "").strip()
        if said and re.fullmatch(r"[0-9][0-9A-Za-z.\-]*", said):
            setattr(into, key, said)
    return into


async def read_identities(
    pool: SSHPool, containers: Mapping[str, str], known: Mapping[str, NodeIdentity]
) -> dict[str, NodeIdentity]:
    """Each node's identity as its engine container answers, over what recon `known`; a node
    that cannot be asked keeps what was known (its unknowns stay unknown)."""

    async def one(host: str, container: str) -> tuple[str, NodeIdentity]:
        base = known.get(host) or NodeIdentity()
        try:
            result = await pool.run(host, identity_command(container), timeout=READ_TIMEOUT_S)
        except SSHError:
            return host, base
        return host, parse_identity(result.stdout, base)

    return dict(await asyncio.gather(*(one(h, c) for h, c in containers.items())))


def from_facts(facts: HostFacts | None, image: str) -> NodeIdentity:
    """What recon already knows of one node: the image's ID and contents, the driver."""
    found = NodeIdentity(image=image or UNKNOWN)
    if facts is None:
        return found
    found.driver = facts.gpu.driver_version or UNKNOWN
    repo, _, tag = image.partition(":")
    for known in facts.docker.images if image else []:
        if known.repository == repo and (known.tag or "latest") == (tag or "latest"):
            found.image_id = known.id or UNKNOWN
            contents = known.contents
            if contents is not None and (contents.vllm or contents.sglang):
                kind = "vllm" if contents.vllm else "sglang"
                found.engine_version = f"{kind} {contents.vllm or contents.sglang}"
            if contents is not None and contents.nccl_build:
                found.nccl_build = contents.nccl_build
    return found


def plan_identities(
    hosts: Mapping[str, HostFacts], nodes: Sequence[str], image: str
) -> dict[str, NodeIdentity]:
    return {node: from_facts(hosts.get(node), image) for node in nodes}


def disagreements(
    identities: Mapping[str, NodeIdentity], *, skip: Sequence[str] = ()
) -> list[Finding]:
    """One finding per field whose known values differ between the nodes, with its fix; fields
    in `skip` are another check's (the plan's image copy handles the image ID)."""
    found = []
    for key, (what, fix) in COMPARED.items():
        if key in skip:
            continue
        known = {n: getattr(i, key) for n, i in identities.items() if getattr(i, key) != UNKNOWN}
        if len(set(known.values())) < 2:
            continue
        seen = "; ".join(f"{node}: {value}" for node, value in known.items())
        found.append(
            Finding(
                severity="warning",
                check="identity",
                kind=f"{key}_differs",
                hosts=list(known),
                message=f"the nodes of one engine run different {what}s ({seen})",
                fix=fix,
                evidence=[f"{node} {what}: {value}" for node, value in known.items()],
            )
        )
    return found
