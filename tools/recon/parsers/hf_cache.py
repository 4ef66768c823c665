"""The Hugging Face cache listing: `model models--ORG--NAME` lines, each followed by `du -sb`.

The probe prints the folder name itself before running `du`, so a host without `du` still says
which models it holds; their sizes are then unknown (None).
"""

from __future__ import annotations

import re

from pydantic import BaseModel

from tools.recon.parsers.disk import parse_du_sb
from tools.recon.parsers.errors import ParseError

FOLDER_PREFIX = "models--"
_NAMED = re.compile(r"^model (?P<folder>models--\S+)$")


class CachedModel(BaseModel):
    repo_id: str
    folder: str
    size_bytes: int | None = None


def repo_id_from_folder(folder: str) -> str:
    """`models--Qwen--Qwen3.5-122B-A10B-FP8` → `Qwen/Qwen3.5-122B-A10B-FP8` (the Hub's own rule)."""
    if not folder.startswith(FOLDER_PREFIX) or folder == FOLDER_PREFIX:
        raise ParseError("a Hub cache folder name 'models--ORG--NAME'", folder)
    return folder.removeprefix(FOLDER_PREFIX).replace("--", "/")


def parse_hf_cache_listing(text: str) -> list[CachedModel]:
    """Models in listing order; a `du -sb` row sets the size of the folder its path ends in."""
    models: dict[str, CachedModel] = {}
    for line in (raw.strip() for raw in text.splitlines()):
        named = _NAMED.match(line)
        if named is not None:
            folder = named["folder"]
            models[folder] = CachedModel(repo_id=repo_id_from_folder(folder), folder=folder)
            continue
        for row in parse_du_sb(line):
            folder = row.path.rstrip("/").rsplit("/", 1)[-1]
            if folder in models:
                models[folder].size_bytes = row.size_bytes
    return list(models.values())
