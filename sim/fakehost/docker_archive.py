"""`docker save IMAGE` and `docker load`: an image as a tar stream, from one engine to another.

What the docker CLI reference says (docs.docker.com/reference/cli/docker/image/save/ and
.../image/load/): `docker save` "produces a tarred repository to the standard output stream"
and refuses a terminal (`cowardly refusing to save to a terminal. Use the -o flag or
redirect`); `docker load` reads such an archive from STDIN and prints `Loaded image: REPO:TAG`
for each tagged image. The archive here is a real tar in the layout docker 25+ writes (OCI
`oci-layout`, `index.json`, `manifest.json` with `Config`, `RepoTags`, `Layers`, blobs under
`blobs/sha256/`); the config blob carries the simulated image's record, so the loading engine
knows the same image (its tools, its size). Layer blobs are tokens, not gigabytes: the save
takes the image's size over the host's `rates.copy_mb_s` on the simulated clock (pace.py), layer
after layer, which is what the pipe into `ssh` would have carried.
"""

from __future__ import annotations

import hashlib
import io
import json
import os
import sys
import tarfile
from pathlib import Path
from typing import Any

from .docker_listing import err_line
from .docker_pull import find_image, layers
from .pace import SimulatorGone, ticks
from .state import locked_state, read_state

_MB = 1_000_000
_REFUSE_TTY = "cowardly refusing to save to a terminal. Use the -o flag or redirect"
_LOAD_TTY = "requested load from stdin, but stdin is empty"


def _add(archive: tarfile.TarFile, name: str, data: bytes) -> None:
    info = tarfile.TarInfo(name)
    info.size = len(data)
    archive.addfile(info, io.BytesIO(data))


def _blob(data: bytes) -> tuple[str, bytes]:
    return f"blobs/sha256/{hashlib.sha256(data).hexdigest()}", data


def save(args: list[str], host_dir: Path) -> int:
    """`docker save IMAGE` to stdout (the only form the deployment uses)."""
    refs = [a for a in args if not a.startswith("-")]
    if not refs:
        return err_line('"docker save" requires at least 1 argument.', 1)
    if any(a in ("-o", "--output") or a.startswith("--output=") for a in args):
        return err_line("docker save -o: writing archives to files is not simulated", 1)
    if os.isatty(sys.stdout.fileno()):
        return err_line(_REFUSE_TTY, 1)
    state = read_state(host_dir)
    image = find_image(state["docker"]["images"], refs[0])
    if image is None:
        return err_line(f"Error response from daemon: reference does not exist: {refs[0]}", 1)
    config_name, config = _blob(json.dumps({"scout_sim_image": image}).encode())
    parts = layers(image)
    seconds = sum(size for _, size in parts) / (float(state["rates"]["copy_mb_s"]) * _MB)
    tag = f"{image['repository']}:{image['tag']}"
    with tarfile.open(fileobj=sys.stdout.buffer, mode="w|") as archive:
        try:
            names = _write_layers(archive, image, parts, seconds, state, host_dir)
        except SimulatorGone:
            return 143
        manifest = [{"Config": config_name, "RepoTags": [tag], "Layers": names}]
        _add(archive, config_name, config)
        _add(archive, "manifest.json", json.dumps(manifest).encode())
        _add(archive, "oci-layout", b'{"imageLayoutVersion":"1.0.0"}')
    sys.stdout.buffer.flush()
    return 0


def _write_layers(
    archive: tarfile.TarFile,
    image: dict[str, Any],
    parts: list[tuple[str, int]],
    seconds: float,
    state: dict[str, Any],
    host_dir: Path,
) -> list[str]:
    """Each layer's blob once its share of the save's time has passed; their names."""
    names: list[str] = []
    for passed in ticks(seconds, state, host_dir):
        while len(names) < len(parts) and (len(names) + 1) * seconds <= passed * len(parts):
            layer_id = parts[len(names)][0]
            name, data = _blob(f"layer {layer_id} of {image['id']}\n".encode())
            _add(archive, name, data)
            names.append(name)
        sys.stdout.buffer.flush()
    for layer_id, _size in parts[len(names) :]:
        name, data = _blob(f"layer {layer_id} of {image['id']}\n".encode())
        _add(archive, name, data)
        names.append(name)
    return names


def load(args: list[str], host_dir: Path) -> int:
    """`docker load` from stdin: the images of the archive join this engine's images."""
    del args  # -q and -i FILE are not used by the deployment
    if os.isatty(sys.stdin.fileno()):
        return err_line(_LOAD_TTY, 1)
    files: dict[str, bytes] = {}
    try:
        with tarfile.open(fileobj=sys.stdin.buffer, mode="r|") as archive:
            for member in archive:
                handle = archive.extractfile(member) if member.isfile() else None
                if handle is not None and member.name.startswith(("manifest.json", "blobs/")):
                    files[member.name] = handle.read()
    except tarfile.TarError:
        return err_line("Error response from daemon: unexpected EOF", 1)
    if "manifest.json" not in files:
        return err_line("Error response from daemon: unexpected EOF", 1)
    loaded = []
    with locked_state(host_dir) as state:
        for entry in json.loads(files["manifest.json"]):
            image = json.loads(files[entry["Config"]])["scout_sim_image"]
            have = state["docker"]["images"]
            old = find_image(have, f"{image['repository']}:{image['tag']}")
            if old is not None:
                have.remove(old)
            have.insert(0, image)
            loaded += entry["RepoTags"]
    for tag in loaded:
        print(f"Loaded image: {tag}", flush=True)
    return 0
