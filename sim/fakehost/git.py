"""`git clone` of the few public repositories a plan fetches, where the host reaches the internet.

git prints `Cloning into 'DIR'...` on stderr, then fails as it does without a route (`fatal:
unable to access 'URL/': Could not resolve host: github.com`, status 128), for a repository
GitHub does not have (`remote: Repository not found.` / `fatal: repository 'URL/' not found`),
or into a folder that is not empty (`fatal: destination path 'DIR' already exists and is not an
empty directory.`) (git builtin/clone.c; public transcripts). A cloned repository holds the
simulator's stand-in of its files (git_repos.py).
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

from .git_repos import REPOSITORIES


def run_git(args: list[str], state: dict[str, Any], host_dir: Path) -> int:
    if not args or args[0] != "clone":
        sys.stderr.write(f"git: '{args[0] if args else ''}' is not simulated on this host\n")
        return 1
    words, skip = [], False
    for word in args[1:]:
        if skip:
            skip = False
        elif word in ("--depth", "-b", "--branch"):
            skip = True
        elif not word.startswith("-"):
            words.append(word)
    if not words:
        sys.stderr.write("fatal: You must specify a repository to clone.\n")
        return 129
    url = words[0]
    name = words[1] if len(words) > 1 else url.rstrip("/").rsplit("/", 1)[-1].removesuffix(".git")
    target = Path(name) if Path(name).is_absolute() else Path.cwd() / name
    if target.exists() and any(target.iterdir()):
        sys.stderr.write(
            f"fatal: destination path '{name}' already exists and is not an empty directory.\n"
        )
        return 128
    sys.stderr.write(f"Cloning into '{name}'...\n")
    if not state.get("internet", True):
        host = url.split("//", 1)[-1].split("/", 1)[0]
        sys.stderr.write(f"fatal: unable to access '{url}/': Could not resolve host: {host}\n")
        return 128
    files = REPOSITORIES.get(url.removesuffix("/").removesuffix(".git"))
    if files is None:
        sys.stderr.write(f"remote: Repository not found.\nfatal: repository '{url}/' not found\n")
        return 128
    (target / ".git").mkdir(parents=True, exist_ok=True)
    for relative, text in files.items():
        (target / relative).write_text(text, encoding="utf-8")
    return 0
