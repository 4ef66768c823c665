"""What an image can run (Ray, vLLM, SGLang versions), asked of the image itself.

NVIDIA's NGC vLLM 26.05 image ships without Ray (its two-Spark playbook pip-installs
`ray[default]` before `ray start`); community `vllm-node` images carry it (docs/sources.md §2.3,
§3.1). Nothing a read-only probe can see says which: `docker image inspect` shows environment
and labels, not installed packages. So each image is asked by running it once: a throwaway
container, no network, no GPU, removed on exit, runs `python3 -m pip show ray vllm sglang`.
That starts a container, so it is not part of the read-only recon pack (the shell judge calls
`docker run` mutating); a caller runs `contents_command` through the gate, then
`apply_contents` fills `Image.contents`.

The same throwaway container is asked for the NCCL its torch links
(`torch.cuda.nccl.version()`): NGC images ship NCCL as a system library, not a pip package, so
`pip show` cannot say. A ring of three Sparks needs NCCL 2.30 or later
(tools/deploy/fabric/ring_nccl.py).
It runs first, so the line's exit status stays `pip show`'s (an image without torch says
`ModuleNotFoundError` and the NCCL stays unknown).
"""

from __future__ import annotations

import shlex
from collections.abc import Iterable

from tools.recon.parsers.image_contents import parse_image_contents
from tools.world.facts import DockerFacts, ImageContents

ENGINE_PACKAGES = ("ray", "vllm", "sglang")
NCCL_CODE = 'import torch; print("NCCL version", ".".join(map(str, torch.cuda.nccl.version())))'


def image_ref(repository: str, tag: str | None) -> str:
    return f"{repository}:{tag or 'latest'}"


def contents_command(refs: Iterable[str]) -> str:
    """One shell line asking every image in `refs`; its output is what `parse_contents` reads."""
    packages = " ".join(ENGINE_PACKAGES)
    run = "docker run --rm --network none --entrypoint python3"
    parts = [
        f"echo {shlex.quote('image ' + ref)}; {run} {shlex.quote(ref)} -c "
        f"{shlex.quote(NCCL_CODE)} 2>&1; {run} {shlex.quote(ref)} -m pip show {packages} 2>&1"
        for ref in refs
    ]
    return "; ".join(parts)


def parse_contents(output: str) -> dict[str, ImageContents]:
    """Per image reference, what it holds; images whose run answered nothing are left out."""
    return {
        ref: ImageContents(**found.versions)
        for ref, found in parse_image_contents(output).items()
        if found.answered
    }


def apply_contents(docker: DockerFacts, found: dict[str, ImageContents]) -> None:
    """Set `contents` on each image that was asked and answered."""
    for image in docker.images:
        contents = found.get(image_ref(image.repository, image.tag))
        if contents is not None:
            image.contents = contents
