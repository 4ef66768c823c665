"""The example approval receiver (examples/approval_receiver.py), loaded and served for tests."""

from __future__ import annotations

import contextlib
import importlib.util
import sys
import threading
from collections.abc import Iterator
from http.server import ThreadingHTTPServer
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def _load_example():
    spec = importlib.util.spec_from_file_location(
        "approval_receiver", ROOT / "examples" / "approval_receiver.py"
    )
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


receiver = _load_example()


@contextlib.contextmanager
def serving(server: ThreadingHTTPServer) -> Iterator[str]:
    """Run `server` in a thread; yields its hook URL; shuts it down on exit."""
    thread = threading.Thread(target=server.serve_forever, args=(0.05,), daemon=True)
    thread.start()
    try:
        host, port = server.server_address[:2]
        yield f"http://{host}:{port}/hook"
    finally:
        server.shutdown()
        server.server_close()
        thread.join()
