"""`ss -tlnp`: which TCP ports are listening (a running inference server shows up here)."""

import re

from pydantic import BaseModel

from tools.recon.parsers.errors import ParseError

_LOCAL = re.compile(r"^(?P<address>.*):(?P<port>\d+|\*)$")
_PROCESS = re.compile(r'users:\(\("(?P<name>[^"]+)",pid=(?P<pid>\d+)')


class ListeningSocket(BaseModel):
    address: str
    port: int
    process: str | None = None
    pid: int | None = None


def parse_ss_listening(text: str) -> list[ListeningSocket]:
    """Read `ss -tlnp` (or `-tln`); process names appear only for the user's own sockets."""
    lines = [line for line in text.splitlines() if line.strip()]
    if not lines or not lines[0].startswith(("State", "Netid")):
        raise ParseError("`ss -tlnp` output with a 'State … Local Address:Port' header", text)
    sockets = []
    for line in lines[1:]:
        words = line.split()
        if "LISTEN" not in words:
            continue
        local = next((_LOCAL.match(word) for word in words[words.index("LISTEN") + 3 :]), None)
        if local is None or local["port"] == "*":
            continue
        process = _PROCESS.search(line)
        sockets.append(
            ListeningSocket(
                address=local["address"].strip("[]"),
                port=int(local["port"]),
                process=process["name"] if process else None,
                pid=int(process["pid"]) if process else None,
            )
        )
    return sockets
