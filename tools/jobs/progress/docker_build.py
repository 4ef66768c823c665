"""`docker build` with BuildKit's plain progress, and the runner build scripts that run it.

Without a terminal BuildKit prints one record per vertex: `#7 [runner 3/9] RUN …` (`[k/n]` the
instruction's place in its stage), `#7 DONE 41.2s` or `#7 CACHED` when it ends, `#7 ERROR: …`
when it fails, and finally `#12 naming to docker.io/library/NAME:TAG done` (moby/buildkit
util/progress/progressui/printer.go; Docker docs "docker buildx build", `--progress`).
spark-vllm-docker's build-and-copy.sh announces each phase first (`Building runner image with
command: …`, the markers sparkrun's builders/eugr.py reads), so the phase is said too.
"""

from __future__ import annotations

import re

from tools.jobs.progress.lines import said_lines
from tools.jobs.progress.model import Progress, percent

KIND = "docker_build"
_STEP = re.compile(r"^#(?P<vertex>\d+) \[(?:(?P<stage>[\w.-]+) )?(?P<k>\d+)/(?P<n>\d+)\] ")
_ENDED = re.compile(r"^#(?P<vertex>\d+) (?:DONE [\d.]+s|CACHED)$")
_NAMED = re.compile(r"^#\d+ naming to (?:docker\.io/library/)?(?P<ref>\S+) done$")
_PHASE = re.compile(
    r"^(?P<phase>Building \w+ image|\w+ build command|Saving image locally|Loading image into)"
)


def read_docker_build(tail: str, milestones: str) -> Progress:
    steps: dict[str, tuple[str, int, int]] = {}  # vertex -> (stage, k, n)
    ended: set[str] = set()
    built, phase = None, None
    for line in said_lines(milestones + "\n" + tail):
        text = line.strip()
        if match := _STEP.match(text):
            steps[match["vertex"]] = (match["stage"] or "", int(match["k"]), int(match["n"]))
        elif match := _ENDED.match(text):
            ended.add(match["vertex"])
        elif match := _NAMED.match(text):
            built = match["ref"]
        elif match := _PHASE.match(text):
            phase = match["phase"]
    stages = {stage: n for stage, _k, n in steps.values()}
    total = sum(stages.values())
    done = sum(1 for vertex in steps if vertex in ended)
    facts: dict[str, object] = {"steps_done": done, "steps_total": total}
    if built:
        facts["image"] = built
        return Progress(KIND, f"built {built}", 1.0, ready=True, facts=facts)
    parts = [phase] if phase else []
    parts += [f"{done}/{total} build steps done"] if total else ["started, no build step yet"]
    return Progress(KIND, ", ".join(parts), percent(done, total) if total else None, facts=facts)
