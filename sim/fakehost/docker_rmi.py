"""`docker rmi` (`docker image rm`): the rollback of a pull, with the engine's own answers.

What moby's ImageDelete does (daemon/images/image_delete.go, and daemon/containerd/
image_delete.go for the containerd image store Docker 29 uses), and what users see from it
(public captures: `Untagged: test:0.3` then `Deleted: sha256:…`; a pulled image also drops its
digest reference, `Untagged: nginx@sha256:…`):
- by reference, no container using the image: `Untagged: REF`, `Untagged: REPO@sha256:DIGEST`,
  `Deleted: sha256:ID`;
- by reference, a container (running or stopped) using it: refused without `-f` with
  `conflict: unable to remove repository reference "REF" (must force) - container CID is using
  its referenced image IID` (12-character ids); with `-f` the reference goes (`Untagged: REF`)
  and the image stays for the container, untagged;
- by image id, used by a running container: `conflict: unable to delete IID (cannot be forced) -
  image is being used by running container CID`; by a stopped one without `-f`: `… (must be
  forced) - image is being used by stopped container CID`;
- unknown: `No such image: REF`. Every error is `Error response from daemon: …`, exit status 1.
"""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Any

from .docker_listing import err_line
from .docker_pull import find_image
from .state import locked_state


def full_id(image: dict[str, Any]) -> str:
    """The image's 64-hex id: its 12-character id (what `docker images` shows) continued."""
    return (image["id"] + hashlib.sha256(image["id"].encode()).hexdigest())[:64]


def _user(state: dict[str, Any], image: dict[str, Any]) -> dict[str, Any] | None:
    """A container made from `image`, running ones first (moby checks those first too)."""
    users = [
        c
        for c in state["docker"]["containers"].values()
        if find_image([image], c["image"]) is not None
    ]
    users.sort(key=lambda c: c["state"] != "running")
    return users[0] if users else None


def _remove(state: dict[str, Any], ref: str, force: bool) -> int:
    images = state["docker"]["images"]
    image = find_image(images, ref)
    if image is None:
        return err_line(f"Error response from daemon: No such image: {ref}")
    tag = f"{image['repository']}:{image['tag']}"
    user = _user(state, image)
    by_id = image["id"].startswith(ref) and ref != tag
    if by_id and user is not None and (user["state"] == "running" or not force):
        running = user["state"] == "running"
        how, which = ("cannot be forced", "running") if running else ("must be forced", "stopped")
        return err_line(
            f"Error response from daemon: conflict: unable to delete {image['id']} ({how}) - "
            f"image is being used by {which} container {user['id'][:12]}"
        )
    if user is not None and not force:
        return err_line(
            f'Error response from daemon: conflict: unable to remove repository reference "{ref}"'
            f" (must force) - container {user['id'][:12]} is using its referenced image "
            f"{image['id']}"
        )
    digest = hashlib.sha256(image["id"].encode()).hexdigest()  # as docker_pull prints it
    print(f"Untagged: {tag}\nUntagged: {image['repository']}@sha256:{digest}")
    if user is not None:  # kept for its container, listed as `<none>` like any dangling image
        image.update(repository="<none>", tag="<none>")
        return 0
    images.remove(image)
    print(f"Deleted: sha256:{full_id(image)}")
    return 0


def rmi(args: list[str], host_dir: Path) -> int:
    """`docker rmi [-f] IMAGE...`: each image in turn; status 1 if any failed."""
    force = any(a in ("-f", "--force") for a in args)
    refs = [a for a in args if not a.startswith("-")]
    if not refs:
        return err_line('"docker rmi" requires at least 1 argument.')
    code = 0
    with locked_state(host_dir) as state:
        for ref in refs:
            code = _remove(state, ref, force) or code
    return code
