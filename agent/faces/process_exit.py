"""The end of a `scout` process: a face whose work is done can end it without the teardown.

Why: as the interpreter ends it takes apart every module and object the process loaded, and a
face that printed tables holds many (pydantic's schemas and models, rich's styles, the parsers'
patterns), only to hand the memory back to the operating system, which takes it back at once
anyway. For `scout recon`, whose whole run is one round trip per host, that teardown was a
measurable part of its time: from the command's return to its parent seeing the process end,
13 ms, and 4 ms when it ends here (median of 15 runs of recon of one host, two-core machine).

So a face whose end must be quick asks for it (`end_at_once`), and the program's entry point
(`agent.faces.cli.program`) ends the process through `end_process`. What Python's own end does
that anyone could see still happens, in its order: threads that are not daemons are waited for
(where one is still running, the process ends as Python ends it, teardown and all), every atexit
handler runs (the log file's flush and close among them), and the standard streams are flushed.
What is skipped: freeing each object, and `__del__` methods of objects alive at exit, which
Python never promised to call. A face that asks must therefore leave no file open for writing
but the log (whose handler is closed by logging's atexit handler); `scout recon` writes none.

`main()` itself always returns its status: tests and other callers run it in their own process.
"""

from __future__ import annotations

import atexit
import os
import sys
import threading
from typing import NoReturn


class _Ending:
    """Whether the running face asked to end the process at once when it is done."""

    at_once = False


def end_at_once() -> None:
    """Ask that the process end without the interpreter's teardown once the command returns
    (through `end_process`; calling it again changes nothing)."""
    _Ending.at_once = True


def end_process(code: int) -> NoReturn:
    """End the process with `code`: at once where the face asked and no thread but daemons
    is left running, otherwise as Python ends it (`sys.exit`)."""
    if not _Ending.at_once or _threads_to_wait_for():
        sys.exit(code)
    atexit._run_exitfuncs()  # what Python's end runs first, the log's close among them
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):  # a reader gone or a stream closed: nothing more to say
            continue
    os._exit(code)


def _threads_to_wait_for() -> bool:
    main = threading.main_thread()
    return any(t is not main and not t.daemon and t.is_alive() for t in threading.enumerate())
