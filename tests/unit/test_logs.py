"""The log file's lines (agent/faces/log_file.py): JSON with time, level, logger and event, secrets
masked, for structlog's loggers and the standard library's alike; structlog and the redactor load
only when something is logged (a command that logs nothing never pays for them)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

# In a fresh interpreter: configure, say what loaded, then log through both.
LOG_BOTH = """
import logging, sys
from pathlib import Path
from agent.faces.log_file import configure_logging
def redactor():
    from agent.safety.redact import Redactor
    return Redactor(["hunter2-secret"])
configure_logging(Path(sys.argv[1]), redactor)
print("loaded:", sorted({"structlog", "agent.safety.redact"} & set(sys.modules)))
logging.getLogger("plain").warning("asked %s", "hunter2-secret")
import structlog
structlog.get_logger("shaped").warning("ssh.retry", host="a", token="hunter2-secret")
"""


def test_log_lines_are_json_masked_and_structlog_loads_on_first_use(tmp_path: Path) -> None:
    log = tmp_path / "scout.log"
    done = subprocess.run(
        [sys.executable, "-c", LOG_BOTH, str(log)], capture_output=True, text=True, check=True
    )
    assert done.stdout == "loaded: []\n"
    plain, shaped = [json.loads(line) for line in log.read_text().splitlines()]
    assert plain.pop("timestamp").endswith("Z") and shaped.pop("timestamp").endswith("Z")
    assert plain == {"event": "asked [REDACTED]", "level": "warning", "logger": "plain"}
    assert shaped == {
        "host": "a",
        "token": "[REDACTED]",
        "event": "ssh.retry",
        "level": "warning",
        "logger": "shaped",
    }


# In a fresh interpreter: keep logs off the screen (or not), log before and after a log file opens.
LOG_BEFORE_THE_FILE = """
import sys
from pathlib import Path
from agent.faces.log_file import configure_logging
from agent.faces.logs import keep_logs_off_the_screen
if sys.argv[2] == "kept":
    keep_logs_off_the_screen()
import structlog
pool = structlog.get_logger("tools.ssh.pool")
pool.info("ssh.wall_server_refused", host="spark-a")
print("the face's own line")
from agent.safety.redact import Redactor
configure_logging(Path(sys.argv[1]), lambda: Redactor([]))
pool.info("ssh.after_the_file", host="spark-a")
"""


def test_a_log_line_before_the_log_file_never_reaches_the_screen(tmp_path: Path) -> None:
    """Unconfigured, structlog prints to stdout: a pool's log line was once the first row of
    `scout eval`'s table. Kept off the screen it is dropped; once the file opens, it is written."""

    def run(how: str) -> tuple[str, list[str]]:
        log = tmp_path / f"{how}.log"
        done = subprocess.run(
            [sys.executable, "-c", LOG_BEFORE_THE_FILE, str(log), how],
            capture_output=True,
            text=True,
            check=True,
        )
        return done.stdout, [json.loads(line)["event"] for line in log.read_text().splitlines()]

    assert run("kept") == ("the face's own line\n", ["ssh.after_the_file"])
    shown, _ = run("unkept")  # the control: structlog's own default
    assert "ssh.wall_server_refused" in shown
