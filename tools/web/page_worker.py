"""The page-reading worker process: `python -m tools.web.page_worker`.

It reads requests from stdin and answers on stdout, one at a time, in length-prefixed frames:
a request is a JSON header frame (media type, charset, URL, selection) then the body frame; the
answer is one JSON frame, a PageReading or {"error": …}. Its address space is capped so a page
that balloons the parser ends in a MemoryError (or the kernel stopping it), never in the agent.
The parent kills it when a page keeps it past the deadline (page_reader.py).
"""

from __future__ import annotations

import json
import os
import resource
import struct
import sys
from typing import BinaryIO

FRAME_HEADER = struct.Struct(">Q")
READY = b'{"ready": true}'
MEMORY_LIMIT_BYTES = 1024**3


def write_frame(stream: BinaryIO, payload: bytes) -> None:
    stream.write(FRAME_HEADER.pack(len(payload)) + payload)
    stream.flush()


def read_frame(stream: BinaryIO) -> bytes | None:
    """The next frame's payload, or None at end of input."""
    header = stream.read(FRAME_HEADER.size)
    if len(header) < FRAME_HEADER.size:
        return None
    (length,) = FRAME_HEADER.unpack(header)
    payload = stream.read(length)
    return payload if len(payload) == length else None


def answer(header: bytes, body: bytes) -> dict[str, object]:
    from tools.web.reading import read_page

    try:
        request = json.loads(header)
        reading = read_page(
            body, request["media_type"], request["charset"], request["url"], request["select"]
        )
    except MemoryError:
        return {"error": "the page needs more memory than a page reader may use"}
    except RecursionError:
        return {"error": "the page nests too deeply to read"}
    except Exception as exc:  # hostile input may break a parser in any way; say which
        return {"error": f"the page could not be read ({type(exc).__name__})"}
    return reading.to_json()


def main() -> None:
    # Answers go to a private copy of stdout; anything a library prints lands on stderr.
    channel = os.fdopen(os.dup(sys.stdout.fileno()), "wb")
    os.dup2(sys.stderr.fileno(), sys.stdout.fileno())
    resource.setrlimit(resource.RLIMIT_AS, (MEMORY_LIMIT_BYTES, MEMORY_LIMIT_BYTES))
    import trafilatura  # noqa: F401  (loaded before the first page, not on its deadline)

    from tools.web import reading  # noqa: F401

    write_frame(channel, READY)
    source = sys.stdin.buffer
    while (header := read_frame(source)) is not None:
        body = read_frame(source)
        if body is None:
            return
        write_frame(channel, json.dumps(answer(header, body)).encode())


if __name__ == "__main__":
    main()
