"""What each image can run, from the recon section that asks every local image itself.

The section prints `image REPO:TAG`, then what `python3 -m pip show ray vllm sglang` printed in
a throwaway container of that image: a `Name:`/`Version:` block per installed package (blocks
separated by `---`) and `WARNING: Package(s) not found: …` for the others
(pip/_internal/commands/show.py), and the `NCCL version X.Y.Z` line the probe prints from
`torch.cuda.nccl.version()` (a 4th part, NCCL's suffix, is dropped), and where the probe asked
for it the `NCCL build PATH NCCL version X.Y.Z+cudaA.B build-id HEX` line that names the binary
(tools/deploy/proof/node_identity.py). An image whose run
printed none of these (no python3 in it, the daemon refused) stays unknown.
"""

from __future__ import annotations

import re

from pydantic import BaseModel

ENGINES = ("ray", "vllm", "sglang")
_IMAGE = re.compile(r"^image (?P<ref>\S+)$")
_FIELD = re.compile(r"^(?P<key>Name|Version): (?P<value>\S+)\s*$")
_NCCL = re.compile(r"^NCCL version (?P<version>\d+\.\d+\.\d+)")
_BUILD = re.compile(r"^NCCL build \S+ NCCL version (?P<version>\S+) build-id (?P<id>[0-9a-f]+)$")
_NOT_FOUND = re.compile(r"^WARNING: Package\(s\) not found: (?P<names>.+)$")


class ImagePackages(BaseModel):
    """Engine versions found in one image; `answered` False: the image said nothing usable."""

    ref: str
    versions: dict[str, str] = {}
    answered: bool = False


def parse_image_contents(text: str) -> dict[str, ImagePackages]:
    """Per image reference, the engine packages it holds."""
    images: dict[str, ImagePackages] = {}
    current: ImagePackages | None = None
    name: str | None = None
    for raw in text.splitlines():
        line = raw.strip()
        if match := _IMAGE.match(line):
            current = images.setdefault(match["ref"], ImagePackages(ref=match["ref"]))
            name = None
        elif current is None:
            continue
        elif match := _FIELD.match(line):
            if match["key"] == "Name":
                name = match["value"].lower()
            elif name in ENGINES:
                current.versions[name] = match["value"]
            current.answered = True
        elif match := _NCCL.match(line):
            current.versions["nccl"] = match["version"]
            current.answered = True
        elif match := _BUILD.match(line):
            current.versions["nccl_build"] = f"{match['version']} build-id {match['id']}"
        elif _NOT_FOUND.match(line):
            current.answered = True
    return images
