"""`docker pull` of an image the scenario's registry has (`docker.pullable`), layer by layer.

Without a terminal (a job's log) docker prints one line per layer state: all layers `Pulling fs
layer`, `Waiting` beyond the three it downloads at once, then per layer `Verifying Checksum`,
`Download complete`, `Pull complete`; then `Digest:`, `Status: Downloaded newer image for REF`
and the reference (tests/fixtures/jobs/docker_pull_nvcr_pytorch_23.07_nontty_legacy_builder_
layers.txt, …_25.09_dgx_spark_elided.txt: `nvcr.io/nvidia/pytorch` pulls "from nvidia/pytorch").
The layers arrive at the host's `rates.download_mb_s` on the simulated clock (pace.py); the
image is local only once the pull completes.
"""

from __future__ import annotations

import hashlib
import sys
from pathlib import Path
from typing import Any

from .pace import SimulatorGone, ticks
from .state import locked_state, read_state
from .units import parse_docker_size

CONCURRENT_DOWNLOADS = 3  # dockerd's max-concurrent-downloads default
_MB = 1_000_000


def image_ref(image: str) -> tuple[str, str]:
    name, _, tag = image.rpartition(":") if ":" in image.split("/")[-1] else (image, "", "latest")
    return name, tag


def find_image(images: list[dict[str, Any]], ref: str) -> dict[str, Any] | None:
    repo, tag = image_ref(ref)
    for image in images:
        if (image["repository"], image["tag"]) == (repo, tag) or image["id"].startswith(ref):
            return image
    return None


def pulled_from(repo: str) -> str:
    """The repository as docker names it in `Pulling from`: without a registry host."""
    first, _, rest = repo.partition("/")
    return rest if rest and ("." in first or ":" in first) else repo


def layers(image: dict[str, Any]) -> list[tuple[str, int]]:
    """The image's layers (id, bytes): a stable split of its size, one layer per ~0.5 GB."""
    total = parse_docker_size(image.get("size", "1GB"))
    count = max(3, min(40, round(total / 5e8)))
    weights = [1 + hashlib.sha256(f"{image['id']}{i}".encode()).digest()[0] for i in range(count)]
    ids = [hashlib.sha256(f"{image['id']}/{i}".encode()).hexdigest()[:12] for i in range(count)]
    return [(ids[i], total * weights[i] // sum(weights)) for i in range(count)]


def print_done(image: dict[str, Any], ref: str) -> None:
    repo, tag = image_ref(ref)
    digest = hashlib.sha256(image["id"].encode()).hexdigest()
    print(f"Digest: sha256:{digest}\nStatus: Downloaded newer image for {repo}:{tag}")
    print(f"{repo}:{tag}", flush=True)


def take(state: dict[str, Any], ref: str) -> dict[str, Any] | None:
    """Move a pullable image into the local images (the pull's end)."""
    image = find_image(state["docker"].get("pullable", []), ref)
    if image is not None:
        state["docker"]["pullable"].remove(image)
        state["docker"]["images"].insert(0, image)
    return image


def registry_error(ref: str) -> int:
    """What `docker pull` says when the registry cannot be reached (the sim has no network)."""
    repo, _tag = image_ref(ref)
    first = repo.split("/")[0]
    registry = first if "." in first or ":" in first else "registry-1.docker.io"
    sys.stderr.write(
        f'Error response from daemon: Get "https://{registry}/v2/": dial tcp: lookup '
        f"{registry} on 127.0.0.53:53: server misbehaving\n"
    )
    return 1


def pull(args: list[str], host_dir: Path) -> int:
    """`docker pull REF`."""
    refs = [a for a in args if not a.startswith("-")]
    if not refs:
        sys.stderr.write('"docker pull" requires exactly 1 argument.\n')
        return 1
    ref = refs[0]
    repo, tag = image_ref(ref)
    state = read_state(host_dir)
    if find_image(state["docker"]["images"], ref):
        print(f"{tag}: Pulling from {pulled_from(repo)}")
        print(f"Status: Image is up to date for {repo}:{tag}\n{repo}:{tag}", flush=True)
        return 0
    image = find_image(state["docker"].get("pullable", []), ref)
    if image is None or not state.get("internet", True):
        return registry_error(ref)
    print(f"{tag}: Pulling from {pulled_from(repo)}", flush=True)
    try:
        _download(layers(image), state, host_dir)
    except SimulatorGone:
        return 143
    with locked_state(host_dir) as changed:
        take(changed, ref)
    print_done(image, ref)
    return 0


def _download(plan: list[tuple[str, int]], state: dict[str, Any], host_dir: Path) -> None:
    for index, (layer, _size) in enumerate(plan):
        print(f"{layer}: Pulling fs layer")
        if index >= CONCURRENT_DOWNLOADS:
            print(f"{layer}: Waiting")
    sys.stdout.flush()
    total = sum(size for _, size in plan)
    seconds = total / (float(state["rates"]["download_mb_s"]) * _MB)
    ends, running = [], 0
    for _layer, size in plan:
        running += size
        ends.append(seconds * running / total if total else 0.0)
    shown = 0
    for passed in ticks(seconds, state, host_dir):
        while shown < len(plan) and ends[shown] <= passed:
            layer = plan[shown][0]
            print(
                f"{layer}: Verifying Checksum\n{layer}: Download complete\n{layer}: Pull complete"
            )
            shown += 1
        sys.stdout.flush()
