"""The Hugging Face cache listing: one line per `models--ORG--NAME` folder.

    model models--Qwen--Qwen3.5-122B-A10B-FP8 119000000000 main=84c8c7f2… snapshot=yes incomplete=0

The fields follow the Hub cache's own layout (huggingface_hub "Understand caching" guide and the
Hub's "Local Cache" reference, huggingface.co/docs/hub/local-cache): `du -sb` of the folder (`-`
when du gave nothing), the commit `refs/main` names (`-` without one), whether
`snapshots/<that commit>/` exists, and how many `blobs/*.incomplete` remain — the client writes a
blob under that name until it is whole (tests/fixtures/jobs/hf_download_cli_0.23.4_resume_…), so
one left over is a download under way or interrupted. A host without the cache folder prints
nothing: no models.
"""

import re

from pydantic import BaseModel

from tools.recon.parsers.errors import ParseError

FOLDER_PREFIX = "models--"
_LINE = re.compile(
    r"^model (?P<folder>models--\S+) (?P<size>\d+|-) main=(?P<revision>[0-9a-f]{40}|-) "
    r"snapshot=(?P<snapshot>yes|no) incomplete=(?P<incomplete>\d+)$"
)


class CachedModel(BaseModel):
    repo_id: str
    folder: str
    size_bytes: int | None = None
    revision: str | None = None  # the commit refs/main names; None without refs/main
    snapshot: bool = False  # snapshots/<revision>/ exists
    incomplete_blobs: int = 0


def repo_id_from_folder(folder: str) -> str:
    """`models--Qwen--Qwen3.5-122B-A10B-FP8` → `Qwen/Qwen3.5-122B-A10B-FP8` (the Hub's own rule)."""
    if not folder.startswith(FOLDER_PREFIX) or folder == FOLDER_PREFIX:
        raise ParseError("a Hub cache folder name 'models--ORG--NAME'", folder)
    return folder.removeprefix(FOLDER_PREFIX).replace("--", "/")


def parse_hf_cache_listing(text: str) -> list[CachedModel]:
    """Models in listing order. Lines that are not `model …` (a tool's complaint, merged from
    stderr) are skipped; a `model …` line in any other shape is an error, not a guess."""
    models = []
    for line in (raw.strip() for raw in text.splitlines()):
        if not line.startswith("model "):
            continue
        row = _LINE.match(line)
        if row is None:
            raise ParseError(
                "'model models--ORG--NAME SIZE main=COMMIT snapshot=yes|no incomplete=N'", line
            )
        models.append(
            CachedModel(
                repo_id=repo_id_from_folder(row["folder"]),
                folder=row["folder"],
                size_bytes=None if row["size"] == "-" else int(row["size"]),
                revision=None if row["revision"] == "-" else row["revision"],
                snapshot=row["snapshot"] == "yes",
                incomplete_blobs=int(row["incomplete"]),
            )
        )
    return models
