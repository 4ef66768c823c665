"""The simulated cluster's documentation site: a few pages served on 127.0.0.1.

Scout's web_fetch reaches it under the name `docs.spark.sim`; the demo maps that name to this
server, so fetching a deployment guide works with no network at all.
"""

from __future__ import annotations

import threading
from functools import partial
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

PAGES = Path(__file__).resolve().parent / "docs"


class _QuietHandler(SimpleHTTPRequestHandler):
    def log_message(self, format: str, *args: Any) -> None:
        pass


class _QuietServer(ThreadingHTTPServer):
    def handle_error(self, request: Any, client_address: Any) -> None:
        pass  # a client that hangs up early (a byte cap, a timeout) is not the site's problem


class DocsSite:
    """`with DocsSite() as site:` serves the pages on `site.port` until the block ends."""

    def __init__(self) -> None:
        handler = partial(_QuietHandler, directory=str(PAGES))
        self._server = _QuietServer(("127.0.0.1", 0), handler)
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    @property
    def port(self) -> int:
        return self._server.server_address[1]

    def __enter__(self) -> DocsSite:
        self._thread.start()
        return self

    def __exit__(self, *exc_info: object) -> None:
        self._server.shutdown()
        self._server.server_close()
        self._thread.join()
