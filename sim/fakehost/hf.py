"""`hf download` and `huggingface-cli download`: fetch a model from the Hub into the HF cache.

The Hub is the scenario's `hub` (models, sizes, shard counts, gated or not). The download fills
`~/.cache/huggingface/hub/models--ORG--NAME` at the host's `rates.download_mb_s` on the simulated
clock (sim/fakehost/pace.py): the cache entry and the disk grow as it goes, a stopped download
resumes from what it had. Output, written without a terminal as a job's log would hold it:

- `hf` (huggingface_hub 1.x): the `Fetching N files` bar and the byte bar `Downloading
  (incomplete total...)`, then `Download complete: : …` and the snapshot path
  (tests/fixtures/jobs/hf_download_hub1.5_nontty_cached_fetching17_download_complete.txt);
- `huggingface-cli` (0.2x): per file `Downloading 'F' to '…/blobs/SHA.incomplete'`, its bar,
  `Download complete. Moving file to …` (hf_download_cli_0.23.4_resume_single_file_…,
  hf_download_verbose_kubectl_logs_init_container_shards.txt), then the snapshot path.

Errors are the client's own: RepositoryNotFoundError, GatedRepoError without a token,
LocalEntryNotFoundError with HF_HUB_OFFLINE=1 or on a host without internet
(huggingface_hub/errors.py and _snapshot_download.py messages).
"""

from __future__ import annotations

import hashlib
import os
import sys
from pathlib import Path
from typing import Any

from . import tqdm
from .hfcache import (
    GB,
    HUB_DIR,
    begin_blob,
    blob_hash,
    cached_revision,
    finish_blob,
    folder_name,
    grow,
    keep_older,
    kept_bytes,
    revision_of,
    set_revision,
    shard_name,
)
from .pace import SimulatorGone, ticks
from .state import read_state

_VALUE_OPTS = {
    "--local-dir",
    "--revision",
    "--token",
    "--repo-type",
    "--max-workers",
    "--cache-dir",
}
_MB = 1_000_000


class HubError(Exception):
    """What the Hub client prints before it exits 1."""


def _parse(args: list[str]) -> tuple[list[str], dict[str, str]]:
    positional, opts, i = [], {}, 0
    while i < len(args):
        key, eq, value = args[i].partition("=")
        if key in _VALUE_OPTS:
            if not eq:
                i += 1
                value = args[i] if i < len(args) else ""
            opts[key] = value
        elif key.startswith("-"):
            opts[key] = "true"
        else:
            positional.append(args[i])
        i += 1
    return positional, opts


def run_hf(args: list[str], state: dict[str, Any], host_dir: Path) -> int:
    if args[:1] != ["download"]:
        sys.stderr.write("usage: hf <command> [<args>]\nhf: error: unknown or missing command\n")
        return 2
    return _download(args[1:], host_dir, verbose_files=False)


def run_huggingface_cli(args: list[str], state: dict[str, Any], host_dir: Path) -> int:
    if args[:1] != ["download"]:
        sys.stderr.write("usage: huggingface-cli <command> [<args>]\n")
        return 2
    return _download(args[1:], host_dir, verbose_files=True)


def _download(args: list[str], host_dir: Path, *, verbose_files: bool) -> int:
    positional, opts = _parse(args)
    if not positional:
        sys.stderr.write("error: the following arguments are required: repo_id\n")
        return 2
    if "--local-dir" in opts:
        sys.stderr.write("sim: --local-dir is not simulated; download into the HF cache\n")
        return 2
    repo, state = positional[0], read_state(host_dir)
    try:
        model = _hub_model(state, repo, opts)
    except HubError as exc:
        sys.stderr.write(f"{exc}\n")
        return 1
    home = host_dir / "home"
    fetch = _Fetch(host_dir, repo, revision_of(repo, model), int(model["files"]))
    if cached_revision(home, repo) not in (None, fetch.revision):
        fetch.kept = keep_older(host_dir, repo)  # main moved on: every file is new
    else:
        fetch.kept = kept_bytes(state, repo)
    set_revision(home, repo, fetch.revision)
    total = round(model["size_gb"] * GB)
    have = max(0, _cached_bytes(read_state(host_dir), repo) - fetch.kept)
    fetch.resume(have, total)
    room = _free_bytes(state)
    if room is not None and total - have > room:
        return _disk_full(fetch, have, total, room)
    try:
        if verbose_files:
            _fetch_files(fetch, have, total)
        else:
            _fetch_snapshot(fetch, have, total)
    except SimulatorGone:
        return 143
    print(_snapshot(host_dir, repo, fetch.revision), flush=True)
    return 0


class _Fetch:
    """One download into the cache: the commit it fetches, its files, and the bytes of older
    revisions already in the folder (they stay, so the folder's size counts them)."""

    def __init__(self, host_dir: Path, repo: str, revision: str, files: int) -> None:
        self.host_dir, self.repo, self.revision, self.files = host_dir, repo, revision, files
        self.kept = 0

    def grow(self, done: int, total: int) -> None:
        grow(self.host_dir, self.repo, self.kept + done, self.kept + total)

    def resume(self, have: int, total: int) -> None:
        """A scenario's interrupted download left an unfinished blob without saying which file
        it was: it is the file the resumed download is at (the client appends to it)."""
        blobs = self.host_dir / "home" / HUB_DIR / folder_name(self.repo) / "blobs"
        names = [shard_name(i, self.files) for i in range(self.files)]
        ours = {f"{blob_hash(self.repo, self.revision, n)}.incomplete" for n in names}
        stray = [p for p in sorted(blobs.glob("*.incomplete")) if p.name not in ours]
        current = min(self.files - 1, self.files * have // total) if total else 0
        if stray:
            stray[0].rename(
                blobs / f"{blob_hash(self.repo, self.revision, names[current])}.incomplete"
            )

    def reached(self, done: int, total: int) -> None:
        """Files before the one `done` falls in are whole; that one is `.incomplete`."""
        home = self.host_dir / "home"
        current = min(self.files, self.files * done // total) if total else self.files
        for index in range(current):
            finish_blob(home, self.repo, self.revision, shard_name(index, self.files))
        if current < self.files:
            begin_blob(home, self.repo, self.revision, shard_name(current, self.files))


def _hub_model(state: dict[str, Any], repo: str, opts: dict[str, str]) -> dict[str, Any]:
    model = state.get("hub", {}).get(repo)
    offline = os.environ.get("HF_HUB_OFFLINE") == "1"
    cached = state.get("hf_cache", {}).get(repo)
    if offline and (cached is None or cached.get("partial")):
        raise HubError(
            "huggingface_hub.errors.LocalEntryNotFoundError: Cannot find an appropriate cached "
            "snapshot folder for the specified revision on the local disk and outgoing traffic "
            "has been disabled. To enable repo look-ups and downloads online, pass "
            "'local_files_only=False' as input."
        )
    if not state.get("internet", True):
        # snapshot_download when the Hub cannot be reached at all (huggingface_hub
        # _snapshot_download.py); a host without internet (the seed's worker) sees this
        raise HubError(
            "huggingface_hub.errors.LocalEntryNotFoundError: An error happened while trying to "
            "locate the files on the Hub and we cannot find the appropriate snapshot folder for "
            "the specified revision on the local disk. Please check your internet connection "
            "and try again."
        )
    if model is None:
        raise HubError(
            f"huggingface_hub.errors.RepositoryNotFoundError: 404 Client Error. (Request ID: "
            f"Root=1-{hashlib.sha1(repo.encode()).hexdigest()[:24]})\n\nRepository Not Found for "
            f"url: https://huggingface.co/api/models/{repo}/revision/main.\nPlease make sure you "
            "specified the correct `repo_id` and `repo_type`.\nIf you are trying to access a "
            "private or gated repo, make sure you are authenticated."
        )
    if model.get("gated") and not (opts.get("--token") or os.environ.get("HF_TOKEN")):
        raise HubError(
            f"huggingface_hub.errors.GatedRepoError: 401 Client Error. (Request ID: "
            f"Root=1-{hashlib.sha1(repo.encode()).hexdigest()[:24]})\n\nCannot access gated repo "
            f"for url https://huggingface.co/api/models/{repo}/revision/main.\nAccess to model "
            f"{repo} is restricted. You must have access to it and be authenticated to access "
            "it. Please log in."
        )
    return dict(model)


def _free_bytes(state: dict[str, Any]) -> int | None:
    root = next((d for d in state.get("disks", []) if d["mount"] == "/"), None)
    return None if root is None else (root["size_kb"] - root["used_kb"]) * 1024


def _disk_full(fetch: _Fetch, have: int, total: int, room: int) -> int:
    """Not enough room: huggingface_hub warns before it starts (file_download.py
    `_check_disk_space`), then the write fails with ENOSPC once the disk is full, leaving the
    file it was writing as `.incomplete`. The sim fills the disk at once rather than at the
    download rate."""
    user = read_state(fetch.host_dir)["user"]
    target = f"/home/{user}/{HUB_DIR}/{folder_name(fetch.repo)}/blobs"
    sys.stderr.write(
        "UserWarning: Not enough free disk space to download the file. The expected file size "
        f"is: {(total - have) / _MB:.2f} MB. The target location {target} only has "
        f"{room / _MB:.2f} MB free disk space.\n"
    )
    fetch.grow(have + room, total)
    fetch.reached(have + room, total)
    sys.stderr.write("OSError: [Errno 28] No space left on device\n")
    return 1


def _snapshot(host_dir: Path, repo: str, revision: str) -> str:
    home = f"/home/{read_state(host_dir)['user']}"
    return f"{home}/{HUB_DIR}/{folder_name(repo)}/snapshots/{revision}"


def _cached_bytes(state: dict[str, Any], repo: str) -> int:
    cached = state.get("hf_cache", {}).get(repo)
    return round(cached["size_gb"] * GB) if cached else 0


def _rate(host_dir: Path) -> float:
    return float(read_state(host_dir)["rates"]["download_mb_s"]) * _MB


def _fetch_snapshot(fetch: _Fetch, have: int, total: int) -> None:
    host_dir, files = fetch.host_dir, fetch.files
    state = read_state(host_dir)
    left = max(0, total - have)
    seconds = left / _rate(host_dir)
    files_have = files * have // total if total else files
    if left == 0:
        sys.stdout.write(tqdm.open_bar("Downloading (incomplete total...)", 0, 0) + "\n\n")
    done = have
    for passed in ticks(seconds, state, host_dir):
        done = have + round(left * passed / seconds) if seconds else total
        fetched = files_have + (files - files_have) * (done - have) // max(left, 1)
        sys.stdout.write(
            "\r" + tqdm.bar(f"Fetching {files} files", fetched, files, passed, bytes_=False)
        )
        sys.stdout.write(
            "\r" + tqdm.bar("Downloading (incomplete total...)", done, total, passed, bytes_=True)
        )
        sys.stdout.flush()
        fetch.grow(done, total)
        fetch.reached(done, total)
    sys.stdout.write("\n\n" + tqdm.open_bar("Download complete: ", left, seconds) + "\n")
    fetch.grow(total, total)
    fetch.reached(total, total)


def _fetch_files(fetch: _Fetch, have: int, total: int) -> None:
    host_dir, repo, files = fetch.host_dir, fetch.repo, fetch.files
    per_file = total // files
    blobs = f"/home/{read_state(host_dir)['user']}/{HUB_DIR}/{folder_name(repo)}/blobs"
    done, fetching, clock = have, f"Fetching {files} files", 0.0
    for index in range(files):
        start, end = index * per_file, total if index == files - 1 else (index + 1) * per_file
        # snapshot_download's own bar, rewritten after each file; the next line is glued to it
        sys.stdout.write("\r" + tqdm.bar(fetching, index, files, clock, bytes_=False))
        if have >= end:
            continue
        name = shard_name(index, files)
        blob = blob_hash(repo, fetch.revision, name)
        offset = max(start, have)
        resume = f" (resume from {offset - start}/{end - start})" if offset > start else ""
        print(f"Downloading '{name}' to '{blobs}/{blob}.incomplete'{resume}", flush=True)
        seconds = (end - offset) / _rate(host_dir)
        clock += seconds
        for passed in ticks(seconds, read_state(host_dir), host_dir):
            done = offset + round((end - offset) * passed / seconds) if seconds else end
            sys.stdout.write("\r" + tqdm.bar(name, done - start, end - start, passed, bytes_=True))
            sys.stdout.flush()
            fetch.grow(done, total)
            fetch.reached(done, total)
        print(f"\nDownload complete. Moving file to {blobs}/{blob}", flush=True)
    print("\r" + tqdm.bar(fetching, files, files, clock, bytes_=False), flush=True)
    fetch.grow(total, total)
    fetch.reached(total, total)
