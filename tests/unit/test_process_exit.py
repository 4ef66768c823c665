"""A face that asks ends its process without the teardown, and loses nothing a user could see."""

from __future__ import annotations

import subprocess
import sys
import tomllib
from pathlib import Path

# Each line tells how far the process's end went: an atexit handler, a buffered write, a file
# the log handler closes, an object alive at exit whose __del__ runs only in the teardown.
ENDING = """\
import atexit, logging, sys
from agent.faces.process_exit import end_at_once, end_process

class Teardown:
    def __del__(self):
        sys.stdout.write("torn down\\n")
        sys.stdout.flush()

alive = Teardown()
handler = logging.FileHandler(sys.argv[2])
logging.getLogger().addHandler(handler)
logging.getLogger().warning("logged before the end")
atexit.register(lambda: sys.stdout.write("atexit ran\\n"))
sys.stdout.write("buffered, no newline")
if sys.argv[1] == "ask":
    end_at_once()
    end_at_once()
{extra}
end_process(3)
"""


def _end(tmp_path, ask: str, extra: str = "") -> tuple[int, str, str]:
    log = tmp_path / "scout.log"
    done = subprocess.run(
        [sys.executable, "-c", ENDING.format(extra=extra), ask, str(log)],
        capture_output=True,
        text=True,
        timeout=60,
    )
    return done.returncode, done.stdout, log.read_text()


def test_asked_the_process_ends_without_the_teardown_and_loses_nothing(tmp_path) -> None:
    code, out, log = _end(tmp_path, "ask")
    assert code == 3
    assert out == "buffered, no newlineatexit ran\n"  # flushed, handlers run, no teardown
    assert log == "logged before the end\n"


def test_not_asked_the_process_ends_as_python_ends_it(tmp_path) -> None:
    code, out, log = _end(tmp_path, "no")
    assert code == 3
    assert out == "buffered, no newlineatexit ran\ntorn down\n"
    assert log == "logged before the end\n"


def test_a_thread_still_running_is_waited_for_as_python_does(tmp_path) -> None:
    extra = (
        "import threading, time\n"
        "threading.Thread(target=lambda: (time.sleep(0.3), print('thread done'))).start()\n"
    )
    code, out, _ = _end(tmp_path, "ask", extra)
    assert code == 3
    assert "thread done" in out
    assert out.endswith("torn down\n")  # it ended the way Python ends, teardown and all


def test_the_scout_program_ends_through_it() -> None:
    """The console script and `python -m agent.faces.cli` both end through end_process."""
    project = tomllib.loads((Path(__file__).parents[2] / "pyproject.toml").read_text())
    assert project["project"]["scripts"]["scout"] == "agent.faces.cli:program"
    done = subprocess.run(
        [sys.executable, "-m", "agent.faces.cli", "recon", "--inventory", "/nonexistent/inv.yaml"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 2
    assert done.stderr.startswith("scout recon:")
