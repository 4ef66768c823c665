"""Files a command inside a container writes with a redirection, and reads back with cat/tail.

`docker exec -d` output reaches no log (procs.detach), so real two-Spark setups send the engine's
output to a file in the container and read it there: `docker exec ray-head tail -200
/var/log/vllm.log` (tests/fixtures/jobs/vllm_serve_dgx_spark_ngc_26.03_ray_head_banner_startup.txt).
A container's files live in the host folder under containers/ID.fs/ and go when it is removed.
"""

from __future__ import annotations

import contextlib
import os
import re
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from .procs import log_path

# `>F`, `>>F`, `1>F`, `2>F`, `2>&1`, `&>F`, `&>>F` (bash's simple output redirections)
REDIRECT = re.compile(r"(?<!\S)(?P<fd>[12]?|&)(?P<op>>>?)\s*(?P<target>&[12]|[^\s;&|]+)")
MARK = "@redirect"


@dataclass(frozen=True)
class Redirect:
    fd: str  # "1", "2" or "&" (both)
    append: bool
    target: str  # a path, or "&1"/"&2"


def mark(line: str) -> tuple[str, list[Redirect]]:
    """Replace each redirection in `line` by a word `@redirectN`, returned in order."""
    found: list[Redirect] = []

    def keep(match: re.Match[str]) -> str:
        found.append(Redirect(match["fd"] or "1", match["op"] == ">>", match["target"]))
        return f" {MARK}{len(found) - 1} "

    return REDIRECT.sub(keep, line), found


def fs_root(host_dir: Path, container_id: str) -> Path:
    log = log_path(host_dir, container_id)
    return log.with_name(f"{container_id}.fs")


def container_path(host_dir: Path, container_id: str, path: str) -> Path | None:
    """Where the container's absolute `path` lives on disk (None: not a plain absolute path)."""
    if not path.startswith("/") or ".." in path.split("/"):
        return None
    return fs_root(host_dir, container_id) / path.lstrip("/")


@contextlib.contextmanager
def redirected(host_dir: Path, container_id: str, redirects: list[Redirect]) -> Iterator[None]:
    """Run the body with stdout/stderr pointed where `redirects` say, as bash applies them."""
    sys.stdout.flush()
    sys.stderr.flush()
    saved = {fd: os.dup(fd) for fd in (1, 2)}
    try:
        for r in redirects:
            targets = (1, 2) if r.fd == "&" else (int(r.fd),)
            if r.target in ("&1", "&2"):
                for fd in targets:
                    os.dup2(int(r.target[1]), fd)
                continue
            path = Path(os.devnull) if r.target == "/dev/null" else None
            path = path or container_path(host_dir, container_id, r.target)
            if path is None:
                continue
            path.parent.mkdir(parents=True, exist_ok=True)
            flags = os.O_WRONLY | os.O_CREAT | (os.O_APPEND if r.append else os.O_TRUNC)
            out = os.open(path, flags, 0o644)
            for fd in targets:
                os.dup2(out, fd)
            os.close(out)
        yield
    finally:
        sys.stdout.flush()
        sys.stderr.flush()
        for fd, copy in saved.items():
            os.dup2(copy, fd)
            os.close(copy)


def read(host_dir: Path, container_id: str, path: str) -> str | None:
    """A file the container wrote, or None if it has no such file."""
    found = container_path(host_dir, container_id, path)
    return found.read_text(errors="replace") if found and found.is_file() else None


def run_tail(host_dir: Path, container_id: str, args: list[str]) -> int:
    """`tail [-n N | -N] FILE` of a container file (GNU tail's default is 10 lines)."""
    count, paths, i = 10, [], 0
    while i < len(args):
        arg = args[i]
        if arg in ("-n", "--lines") and i + 1 < len(args):
            count, i = int(args[i + 1].lstrip("+")), i + 1
        elif re.fullmatch(r"-\d+", arg):
            count = int(arg[1:])
        elif not arg.startswith("-"):
            paths.append(arg)
        i += 1
    code = 0
    for path in paths:
        text = read(host_dir, container_id, path)
        if text is None:
            sys.stderr.write(f"tail: cannot open '{path}' for reading: No such file or directory\n")
            code = 1
            continue
        lines = text.splitlines(keepends=True)
        sys.stdout.write("".join(lines[-count:] if count else []))
    return code
