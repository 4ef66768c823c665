"""The host's Hugging Face cache as folders: `~/.cache/huggingface/hub/models--ORG--NAME/`.

The folders hold no weights; their sizes come from the scenario's `hf_cache` (see `du`).
"""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Any

from .state import locked_state

HUB_DIR = Path(".cache") / "huggingface" / "hub"
GB = 1_000_000_000


def folder_name(model: str) -> str:
    """What the Hub client calls a model's cache folder: `Qwen/X` → `models--Qwen--X`."""
    return "models--" + model.replace("/", "--")


def lay_out(models: dict[str, Any], home: Path) -> None:
    """One folder per cached model, with `refs/main` and an empty snapshot like the Hub's."""
    for model in models:
        folder = home / HUB_DIR / folder_name(model)
        commit = hashlib.sha1(model.encode()).hexdigest()
        (folder / "snapshots" / commit).mkdir(parents=True, exist_ok=True)
        (folder / "blobs").mkdir(exist_ok=True)
        (folder / "refs").mkdir(exist_ok=True)
        (folder / "refs" / "main").write_text(commit)


def weight_bytes(state: dict[str, Any], home: Path) -> dict[Path, int]:
    """The scenario's size for each model folder, keyed by the folder's resolved path."""
    hub = (home / HUB_DIR).resolve()
    return {
        hub / folder_name(model): round(spec["size_gb"] * GB)
        for model, spec in state.get("hf_cache", {}).items()
    }


def grow(host_dir: Path, model: str, done: int, total: int) -> None:
    """A download or copy has brought `done` of `total` bytes: the cache entry (partial until
    done) and the root disk's usage follow."""
    with locked_state(host_dir) as state:
        cached = state.setdefault("hf_cache", {})
        before = round(cached.get(model, {}).get("size_gb", 0) * GB)
        entry: dict[str, Any] = {"size_gb": done / GB}
        if done < total:
            entry["partial"] = True
        cached[model] = entry
        root = next((d for d in state.get("disks", []) if d["mount"] == "/"), None)
        if root is not None:
            root["used_kb"] += (done - before) // 1024
