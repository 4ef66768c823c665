"""`docker pull`: layers pulled of those announced, bytes when docker prints them.

Without a terminal (a job's log) docker prints one line per layer state (`3153aa388d02: Pulling
fs layer`, `Waiting`, `Verifying Checksum`, `Download complete`, `Pull complete`, `Already
exists`; tests/fixtures/jobs/docker_pull_nvcr_pytorch_23.07_nontty_legacy_builder_layers.txt),
then `Digest: …`, `Status: Downloaded newer image for REF` and the reference
(…_25.09_dgx_spark_elided.txt). On a terminal a `Downloading [==>   ] 12.3MB/45.6MB` bar may
follow a layer id. Errors are docker's own line (…_error_getting_credentials_gpg.txt).
"""

from __future__ import annotations

import re

from tools.jobs.progress.errors import first_error
from tools.jobs.progress.lines import screen_lines, segments
from tools.jobs.progress.model import Progress, percent, size_bytes
from tools.jobs.progress.tqdm import human_bytes

KIND = "docker_pull"
_LAYER = re.compile(
    r"^(?P<id>[0-9a-f]{12}): (?P<state>Pulling fs layer|Waiting|Downloading|Verifying Checksum|"
    r"Download complete|Extracting|Pull complete|Already exists)"
    r"(?:\s*\[[=> ]*\]\s*(?P<done>[\d.]+\s*[kKMG]?B)/(?P<total>[\d.]+\s*[kKMG]?B))?"
)
_DONE_STATES = {"Pull complete", "Already exists"}
_FINISHED = re.compile(r"^Status: (?:Downloaded newer image|Image is up to date) for (?P<ref>\S+)")
_PULLING = re.compile(r"^(?P<tag>\S+): Pulling from (?P<repo>\S+)")


def read_docker_pull(tail: str, milestones: str) -> Progress:
    states: dict[str, str] = {}
    sizes: dict[str, tuple[int, int]] = {}
    image = None
    for piece in segments(milestones + "\n" + tail):
        text = piece.strip()
        if match := _PULLING.match(text):
            image = f"{match['repo']}:{match['tag']}"
        match = _LAYER.match(text)
        if match is None:
            continue
        layer, state = match["id"], match["state"]
        if states.get(layer) not in _DONE_STATES:
            states[layer] = state
        if match["done"] and match["total"]:
            sizes[layer] = (size_bytes(match["done"]) or 0, size_bytes(match["total"]) or 0)
    lines = screen_lines(tail)
    finished = next((m["ref"] for line in lines if (m := _FINISHED.match(line.strip()))), None)
    done = sum(1 for s in states.values() if s in _DONE_STATES)
    facts: dict[str, object] = {"layers_done": done, "layers_total": len(states)}
    if image:
        facts["image"] = image
    parts = [f"layers {done}/{len(states)} pulled"] if states else []
    fraction = percent(done, len(states)) if states else None
    if sizes:
        got, total = sum(d for d, _ in sizes.values()), sum(t for _, t in sizes.values())
        facts.update(bytes_done=got, bytes_total=total)
        parts.append(f"{human_bytes(got)}/{human_bytes(total)} of the layers downloading")
    if finished:
        facts["image"] = finished
        parts = [f"pulled {finished}", *parts[:1]]
        fraction = 1.0
    return Progress(
        KIND,
        ", ".join(parts) or "started, no layer listed yet",
        fraction,
        ready=finished is not None,
        error=first_error(screen_lines(milestones + "\n" + tail)),
        facts=facts,
    )
