"""docker inside Scout's wall: only reads, through the wall's read-only proxy.

On a real host the wall closes docker's socket and Scout's helper points the client at a
read-only Docker Engine API proxy (tools/wall/host_docker_proxy.py in Scout; SCOUT_WALL names
`docker-read-proxy`): GET/HEAD of read endpoints pass, anything else is answered 403 with the
proxy's reason, which the client prints as "Error response from daemon: …". The simulated
engine does the same for a walled caller, so a change the gate let through by mistake fails
here as it would there; without the proxy the closed socket refuses the connection.

A simulated host's commands may create no socket at all (confinement.py), so Scout's helper
cannot bind the proxy's port here and says `no-docker-proxy`: the call asked for the proxy,
which a real host's helper binds, so that too is answered as through the proxy.
"""

from __future__ import annotations

import os

from .docker_daemon import denied
from .docker_listing import err_line
from .scout_wall import WALLED_ENV

PROXY_PARTS = ("docker-read-proxy", "no-docker-proxy")  # the call asked for the proxy
REFUSED = "Error response from daemon: refused by the wall's read-only docker proxy: "
READ_VERBS = {"ps", "images", "inspect", "logs", "stats", "version", "info"}


def walled_refusal(verb: str, args: list[str]) -> int | None:
    """The exit status of a walled call the proxy (or the closed socket) refuses, after
    printing why; None when the engine answers it."""
    if os.environ.get(WALLED_ENV) != "1":
        return None
    wall = os.environ.get("SCOUT_WALL", "").split(",")
    if not any(part in wall for part in PROXY_PARTS):
        return denied({"ps": "containers/json", "images": "images/json"}.get(verb, verb))
    if verb not in READ_VERBS:
        return err_line(REFUSED + "POST changes the daemon's state; only reads (GET, HEAD) pass")
    if verb == "logs" and any(a in ("-f", "--follow") for a in args):
        return err_line(REFUSED + "following logs never ends; ask for them without --follow")
    if verb == "stats" and "--no-stream" not in args:
        return err_line(REFUSED + "a stats stream never ends; ask for one sample (--no-stream)")
    return None
