"""The end of a `scout` process: no last collection over every object it loaded.

Why: as the interpreter ends it runs the cyclic garbage collector once more over every object
still alive, and a face that printed tables holds many (pydantic's schemas and models, rich's
styles, the parsers' patterns): on the shared two-core machine that pass took about 60 ms of
`scout recon`'s end, longer than its own parsing and printing, to free memory the operating
system takes back anyway. Freezing the objects at exit (`gc.freeze`, after the face's output
has gone: atexit handlers run before that collection) keeps them out of it. Nothing else
changes: atexit handlers (the log's flush among them) run as before, the standard streams are
flushed as before, and Python never promised `__del__` for objects alive at exit.
"""

from __future__ import annotations

import atexit
import gc


def end_without_last_collection() -> None:
    """Freeze every object at exit, so the interpreter's last collection skips them; calling
    it again changes nothing."""
    atexit.unregister(gc.freeze)
    atexit.register(gc.freeze)
