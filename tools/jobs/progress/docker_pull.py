"""`docker pull`: layers pulled of those announced, bytes when docker prints them.

Without a terminal (a job's log) docker prints one line per layer state (`3153aa388d02: Pulling
fs layer`, `Waiting`, `Verifying Checksum`, `Download complete`, `Pull complete`, `Already
exists`; tests/fixtures/jobs/docker_pull_nvcr_pytorch_23.07_nontty_legacy_builder_layers.txt),
then `Digest: …`, `Status: Downloaded newer image for REF` and the reference
(…_25.09_dgx_spark_elided.txt). On a terminal a `Downloading [==>   ] 12.3MB/45.6MB` bar may
follow a layer id. `docker run` pulls an image it lacks the same way, after `Unable to find image
'REF' locally`, which keeps the registry that `Pulling from` drops (…_implicit_pull_…txt).
"""

from __future__ import annotations

import re

from tools.jobs.progress.lines import said_lines, segments
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
_IMPLICIT = re.compile(r"^Unable to find image '(?P<ref>[^']+)' locally", re.M)
_FINISHED_ANYWHERE = re.compile(
    r"^Status: (?:Downloaded newer image|Image is up to date) for (?P<ref>\S+)", re.M
)


def pulled_image(text: str) -> str | None:
    """The image a finished pull names in the log (`Status: … for REF`), if one finished."""
    found = [m["ref"] for m in _FINISHED_ANYWHERE.finditer(text)]
    return found[-1] if found else None


def read_docker_pull(tail: str, milestones: str) -> Progress:
    states: dict[str, str] = {}
    sizes: dict[str, tuple[int, int]] = {}
    image = None
    for piece in segments(milestones + "\n" + tail):
        text = piece.strip()
        if match := _PULLING.match(text):
            image = image or f"{match['repo']}:{match['tag']}"
        if match := _IMPLICIT.match(text):
            image = match["ref"]
        match = _LAYER.match(text)
        if match is None:
            continue
        layer, state = match["id"], match["state"]
        if states.get(layer) not in _DONE_STATES:
            states[layer] = state
        if match["done"] and match["total"]:
            sizes[layer] = (size_bytes(match["done"]) or 0, size_bytes(match["total"]) or 0)
    lines = said_lines(milestones + "\n" + tail)
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
        facts=facts,
    )
