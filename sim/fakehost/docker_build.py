"""`docker build` of a context folder on the host, with BuildKit's plain progress.

Without a terminal (a job's log, or `--progress=plain`) BuildKit prints one record per vertex:
`#N [internal] load build definition from Dockerfile`, each instruction of the Dockerfile as
`#N [k/n] RUN …` with `#N DONE 12.3s` when it ends, then `#N exporting to image`, `#N writing
image sha256:…`, `#N naming to docker.io/library/NAME:TAG done` (moby/buildkit
util/progress/progressui/printer.go; Docker docs "docker buildx build", `--progress`). A context
without its Dockerfile fails as docker does: `ERROR: failed to build: failed to solve: failed to
read dockerfile: open Dockerfile: no such file or directory`. The instructions take the host's
`docker.build_s` simulated seconds between them (pace.py); the image exists only at the end,
holding what a vLLM runner image holds (`BUILT`).
"""

from __future__ import annotations

import hashlib
import re
import sys
import time
from pathlib import Path
from typing import Any

from .docker_pull import image_ref
from .pace import SimulatorGone, ticks
from .state import locked_state, read_state

# what the built image holds: a vLLM runner as spark-vllm-docker builds it
BUILT = {"size": "21.4GB", "run_memory_kb": 4194304, "tools": {"vllm": "0.19.1", "ray": "2.49.1"}}
_STEP = re.compile(r"^\s*(RUN|COPY|ADD|WORKDIR)\s")  # instructions that make a vertex
_FROM = re.compile(r"^\s*FROM\s+(?P<image>\S+)(?:\s+AS\s+(?P<stage>\S+))?", re.I)
_ARG = re.compile(r"^\s*ARG\s+(?P<name>\w+)=(?P<value>\S+)")


def build(args: list[str], host_dir: Path) -> int:
    """`docker build [-t NAME] [-f FILE] [--progress=plain] [--build-arg K=V] CONTEXT`."""
    tags, dockerfile, context = _options(args)
    if context is None:
        sys.stderr.write('ERROR: "docker buildx build" requires exactly 1 argument.\n')
        return 1
    folder = _host_path(context)
    source = folder / dockerfile
    if not source.is_file():
        sys.stderr.write(
            "ERROR: failed to build: failed to solve: failed to read dockerfile: open "
            f"{dockerfile}: no such file or directory\n"
        )
        return 1
    steps = _steps(source.read_text(encoding="utf-8", errors="replace").splitlines())
    print('#0 building with "default" instance using docker driver\n', flush=True)
    print(f"#1 [internal] load build definition from {dockerfile}")
    print(f"#1 transferring dockerfile: {len(source.read_bytes())}B done\n#1 DONE 0.0s\n")
    state = read_state(host_dir)
    seconds = float(state["docker"]["build_s"])
    try:
        _run_steps(steps, seconds, state, host_dir)
    except SimulatorGone:
        return 143
    image_id = hashlib.sha256(f"{tags}{time.time()}".encode()).hexdigest()
    vertex = len(steps) + 2
    print(f"#{vertex} exporting to image\n#{vertex} exporting layers done")
    print(f"#{vertex} writing image sha256:{image_id} done")
    with locked_state(host_dir) as changed:
        for tag in tags:
            repo, version = image_ref(tag)
            print(f"#{vertex} naming to docker.io/library/{repo}:{version} done")
            have = changed["docker"]["images"]
            have[:] = [i for i in have if (i["repository"], i["tag"]) != (repo, version)]
            made = BUILT | {"repository": repo, "tag": version, "id": image_id[:12]}
            have.insert(0, made | {"created": "Less than a second ago"})
    print(f"#{vertex} DONE 0.4s", flush=True)
    return 0


def _steps(lines: list[str]) -> list[tuple[str, str]]:
    """(stage, text) of the last stage's vertices: its FROM (the image, its global ARGs
    filled, as BuildKit names it) and each RUN, COPY, ADD and WORKDIR."""
    args: dict[str, str] = {}
    steps: list[tuple[str, str]] = []
    for line in lines:
        if (match := _ARG.match(line)) and not steps:
            args[match["name"]] = match["value"]
        elif match := _FROM.match(line):
            image = re.sub(r"\$\{?(\w+)\}?", lambda m: args.get(m[1], m[0]), match["image"])
            image = image if "/" in image.split(":")[0] else f"library/{image}"
            steps = [(match["stage"] or "", f"FROM docker.io/{image}")]
        elif _STEP.match(line) and steps:
            steps.append((steps[0][0], " ".join(line.split())))
    return steps


def _run_steps(
    steps: list[tuple[str, str]], seconds: float, state: dict[str, Any], host_dir: Path
) -> None:
    """Each vertex in turn, ending at its share of the build's time."""
    each = seconds / max(1, len(steps))
    for index, (stage, step) in enumerate(steps, start=1):
        vertex = index + 1
        where = f"{stage} " if stage else ""
        print(f"#{vertex} [{where}{index}/{len(steps)}] {step}", flush=True)
        for _ in ticks(each, state, host_dir):
            pass
        print(f"#{vertex} DONE {each:.1f}s\n", flush=True)


def _options(args: list[str]) -> tuple[list[str], str, str | None]:
    tags, dockerfile, rest = [], "Dockerfile", []
    words = iter(args)
    for word in words:
        if word in ("-t", "--tag"):
            tags.append(next(words, ""))
        elif word.startswith("--tag="):
            tags.append(word.split("=", 1)[1])
        elif word in ("-f", "--file"):
            dockerfile = next(words, "Dockerfile")
        elif word in ("--build-arg", "--build-context", "--target", "--progress"):
            next(words, None)
        elif not word.startswith("-"):
            rest.append(word)
    return [t for t in tags if t], dockerfile, rest[-1] if rest else None


def _host_path(context: str) -> Path:
    """The context folder: relative to the command's own folder, as the CLI reads it."""
    path = Path(context)
    return path if path.is_absolute() else Path.cwd() / path
