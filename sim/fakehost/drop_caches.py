"""`tee` as the page-cache drop uses it: `sync; echo 3 | sudo tee /proc/sys/vm/drop_caches`
(docs/sources.md §1.2 and failure mode 11; vLLM issue #48140) empties the host's page
cache. tee copies its input to its output as the real one does; any other file it is asked to
write is refused, as the sandbox refuses writes outside the host's home.
"""

from __future__ import annotations

import sys
from typing import Any

from .state import locked_state

DROP_CACHES = "/proc/sys/vm/drop_caches"
LEFT_AFTER_DROP_KB = 262144  # what stays cached after a drop (the running system's own files)


def run_tee(args: list[str], state: dict[str, Any], host_dir: Any) -> int:
    data = sys.stdin.read()
    sys.stdout.write(data)
    files = [a for a in args if not a.startswith("-")]
    code = 0
    for path in files:
        if path == DROP_CACHES and data.strip() in ("1", "3"):
            with locked_state(host_dir) as current:
                current["memory"]["cache_kb"] = min(
                    current["memory"]["cache_kb"], LEFT_AFTER_DROP_KB
                )
            continue
        sys.stderr.write(f"tee: {path}: Read-only file system\n")
        code = 1
    return code
