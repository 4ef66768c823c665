"""At exit a `scout` process freezes its objects before the interpreter's last collection."""

from __future__ import annotations

import subprocess
import sys

# An atexit handler registered first runs last: it sees what the interpreter's own last
# collection will see.
REPORT_AT_EXIT = (
    "import atexit, gc, sys\n"
    "atexit.register(lambda: print('frozen at exit:', gc.get_freeze_count() > 0))\n"
)


def _frozen_at_exit(code: str) -> str:
    done = subprocess.run(
        [sys.executable, "-c", REPORT_AT_EXIT + code], capture_output=True, text=True, check=True
    )
    return done.stdout.strip().splitlines()[-1]


def test_the_objects_are_frozen_before_the_last_collection() -> None:
    code = (
        "from agent.faces.process_exit import end_without_last_collection\n"
        "end_without_last_collection()\nend_without_last_collection()\n"
    )
    assert _frozen_at_exit(code) == "frozen at exit: True"


def test_a_process_that_does_not_ask_ends_as_python_does() -> None:
    assert _frozen_at_exit("import agent.faces.process_exit\n") == "frozen at exit: False"
