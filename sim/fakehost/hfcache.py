"""The host's Hugging Face cache as the Hub client lays it out: `~/.cache/huggingface/hub/
models--ORG--NAME/{refs,blobs,snapshots}`.

The layout is the Hub's (huggingface_hub "Understand caching" guide; huggingface.co/docs/hub/
local-cache): `refs/main` holds the commit the model was fetched at, `snapshots/<commit>/`
holds one symlink per file into `blobs/<hash>`, and a blob is written as `<hash>.incomplete`
until it is whole, then moved to its name (tests/fixtures/jobs/hf_download_cli_0.23.4_resume_…:
"Downloading '…' to '…/blobs/3f3a….incomplete' (resume from …)" then "Download complete.
Moving file to …/blobs/3f3a…"), so a download stopped part way leaves one behind. The files
hold no weights: a model folder's size is the scenario's `hf_cache` entry (see `du`).
"""

from __future__ import annotations

import hashlib
import json
import shutil
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from .model_configs import CONFIGS
from .state import locked_state

HUB_DIR = Path(".cache") / "huggingface" / "hub"
GB = 1_000_000_000


def folder_name(model: str) -> str:
    """What the Hub client calls a model's cache folder: `Qwen/X` → `models--Qwen--X`."""
    return "models--" + model.replace("/", "--")


def model_folder(home: Path, model: str) -> Path:
    return home / HUB_DIR / folder_name(model)


def default_revision(model: str) -> str:
    """The commit the Hub's main is at when a scenario names none (stable per model)."""
    return hashlib.sha1(model.encode()).hexdigest()


def _field(spec: Any, key: str) -> Any:
    """A field of a scenario entry, given as the scenario's model or as state JSON."""
    return spec.get(key) if isinstance(spec, Mapping) else getattr(spec, key, None)


def revision_of(model: str, spec: Any) -> str:
    return _field(spec, "revision") or default_revision(model)


def cached_revision(home: Path, model: str) -> str | None:
    """The commit refs/main names on this host, None without one."""
    ref = model_folder(home, model) / "refs" / "main"
    return ref.read_text().strip() if ref.is_file() else None


def shard_name(index: int, files: int) -> str:
    return f"model-{index + 1:05d}-of-{files:05d}.safetensors"


def blob_hash(model: str, revision: str, name: str) -> str:
    """A file's blob name: the sha256 of its content, here of what identifies the content."""
    return hashlib.sha256(f"{model}/{revision}/{name}".encode()).hexdigest()


def lay_out(models: Mapping[str, Any], home: Path) -> None:
    """One folder per cached model at its revision; a `partial` entry keeps an unfinished blob."""
    for model, spec in models.items():
        revision = revision_of(model, spec)
        set_revision(home, model, revision)
        if _field(spec, "partial"):
            begin_blob(home, model, revision, shard_name(0, 1))


def set_revision(home: Path, model: str, revision: str) -> None:
    """What the client does first when it resolves main: refs/main names the commit, and the
    commit's snapshot folder exists; the small config.json comes first (model_configs.py)."""
    folder = model_folder(home, model)
    (folder / "snapshots" / revision).mkdir(parents=True, exist_ok=True)
    (folder / "blobs").mkdir(exist_ok=True)
    (folder / "refs").mkdir(exist_ok=True)
    (folder / "refs" / "main").write_text(revision)
    config = CONFIGS.get(model)
    if config is not None:
        blob = folder / "blobs" / blob_hash(model, revision, "config.json")
        blob.write_text(json.dumps(config, indent=2))
        link = folder / "snapshots" / revision / "config.json"
        if not link.is_symlink():
            link.symlink_to(Path("..") / ".." / "blobs" / blob.name)


def begin_blob(home: Path, model: str, revision: str, name: str) -> None:
    blobs = model_folder(home, model) / "blobs"
    (blobs / f"{blob_hash(model, revision, name)}.incomplete").touch()


def finish_blob(home: Path, model: str, revision: str, name: str) -> None:
    """The blob moves to its name and the snapshot links to it, as `../../blobs/<hash>`."""
    folder = model_folder(home, model)
    blob = blob_hash(model, revision, name)
    partial = folder / "blobs" / f"{blob}.incomplete"
    if partial.exists():
        partial.rename(folder / "blobs" / blob)
    else:
        (folder / "blobs" / blob).touch()
    link = folder / "snapshots" / revision / name
    if not link.is_symlink():
        link.symlink_to(Path("..") / ".." / "blobs" / blob)


def open_folder(home: Path, model: str) -> None:
    """rsync creates the folder and `blobs/` (sorted first) before anything names a commit."""
    (model_folder(home, model) / "blobs").mkdir(parents=True, exist_ok=True)


def copy_folder(source_home: Path, target_home: Path, model: str) -> None:
    """What `rsync -a` of the model folder leaves on the peer: the same refs, snapshots (links
    kept as links) and blobs, merged into what the peer had."""
    shutil.copytree(
        model_folder(source_home, model),
        model_folder(target_home, model),
        symlinks=True,
        dirs_exist_ok=True,
    )


def weight_bytes(state: dict[str, Any], home: Path) -> dict[Path, int]:
    """The scenario's size for each model folder, keyed by the folder's resolved path."""
    hub = (home / HUB_DIR).resolve()
    return {
        hub / folder_name(model): round(spec["size_gb"] * GB)
        for model, spec in state.get("hf_cache", {}).items()
    }


def grow(host_dir: Path, model: str, done: int, total: int) -> None:
    """A download or copy has brought `done` of `total` bytes: the cache entry (partial until
    done) and the root disk's usage follow. Other keys of the entry (`kept_gb`) stay."""
    with locked_state(host_dir) as state:
        entry = state.setdefault("hf_cache", {}).setdefault(model, {})
        before = round(entry.get("size_gb", 0) * GB)
        entry["size_gb"] = done / GB
        if done < total:
            entry["partial"] = True
        else:
            entry.pop("partial", None)
        root = next((d for d in state.get("disks", []) if d["mount"] == "/"), None)
        if root is not None:
            root["used_kb"] += (done - before) // 1024


def keep_older(host_dir: Path, model: str) -> int:
    """A download of a new revision starts: the older revision's blobs stay on disk (the
    client keeps them, "Understand caching"), counted apart as `kept_gb`; their bytes."""
    with locked_state(host_dir) as state:
        entry = state.setdefault("hf_cache", {}).setdefault(model, {"size_gb": 0})
        if not entry.get("partial"):
            entry["kept_gb"] = entry.get("size_gb", 0)
        return round(entry.get("kept_gb", 0) * GB)


def kept_bytes(state: dict[str, Any], model: str) -> int:
    """Bytes of older revisions in the model's folder (0 when it holds one revision)."""
    return round(state.get("hf_cache", {}).get(model, {}).get("kept_gb", 0) * GB)
