"""Finding a program's processes by their parent links in /proc, and whether any outlived it."""

from __future__ import annotations

from pathlib import Path


def _stat(pid: int) -> tuple[str, int] | None:
    """(state, parent pid) of a process, or None when it is gone."""
    try:
        text = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    fields = text[text.rindex(")") + 2 :].split()
    return fields[0], int(fields[1])


def cmdline(pid: int) -> str | None:
    try:
        raw = Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:
        return None
    return raw.replace(b"\0", b" ").decode(errors="replace").strip()


def process_tree(root: int) -> dict[int, str]:
    """`root` and all its descendants now: pid -> command line."""
    children: dict[int, list[int]] = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit() and (stat := _stat(int(entry.name))) is not None:
            children.setdefault(stat[1], []).append(int(entry.name))
    tree, todo = {}, [root]
    while todo:
        pid = todo.pop()
        line = cmdline(pid)
        if line is not None:
            tree[pid] = line
            todo += children.get(pid, [])
    return tree


def survivors(snapshot: dict[int, str]) -> dict[int, str]:
    """The processes of `snapshot` still running (same pid and command line, not a zombie)."""
    alive = {}
    for pid, line in snapshot.items():
        stat = _stat(pid)
        if stat is not None and stat[0] != "Z" and cmdline(pid) == line:
            alive[pid] = line
    return alive


def sleepers(seconds: str) -> list[int]:
    """The pids of every `sleep SECONDS` running now: a test's own sleeper, named by a duration
    no other process uses, found wherever it ended up (walled, in a PID namespace, reparented)."""
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit() and cmdline(int(entry.name)) == f"sleep {seconds}":
            found.append(int(entry.name))
    return found
