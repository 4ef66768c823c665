"""What a soak watches for, judged from what it saw: a stream that got no token for too long,
latency that rose while the load stayed the same, and the lines an engine logs when it hangs.

Pure functions of observations, so the judgement is tested apart from the hosts (soak.py reads
them). A hang of TP=2 across two Sparks shows as every stream frozen mid-answer while /health
still answers; the logs then carry vLLM's shared-memory broadcast warning and torch's NCCL
watchdog timeout (vLLM issues #41725, #42354); a lost GPU logs an `NVRM: Xid`.
"""

from __future__ import annotations

import re
import statistics
from dataclasses import dataclass, field

# The lines a hang or a crash leaves in an engine's log (Xid from the kernel's NVRM, NCCL's own
# WARN/ERROR, the ProcessGroupNCCL watchdog, vLLM's shm_broadcast and engine-death lines).
SIGNS = re.compile(
    r"Xid|NCCL (WARN|ERROR)|Watchdog caught collective|No available shared memory broadcast block"
    r"|EngineDeadError|EngineCore.*(died|failed)|RPC call to \S+ timed out|CUDA error"
    r"|unhandled system error|Connection reset by peer"
)
RISE = 1.5  # the last third's median end-to-end latency over the first third's: a rise


@dataclass(frozen=True)
class Stall:
    """A stream that got no token for `quiet_s`, from `since_s` into the soak."""

    stream: str
    since_s: float
    quiet_s: float


@dataclass
class StreamWatch:
    """Bytes each stream received so far, and when (seconds into the soak) each last grew."""

    stall_s: float
    seen: dict[str, int] = field(default_factory=dict)
    grew: dict[str, float] = field(default_factory=dict)

    def observe(self, at_s: float, sizes: dict[str, int]) -> Stall | None:
        """Record the streams' sizes at `at_s`; the stream quiet longest, once past `stall_s`."""
        for stream, size in sizes.items():
            if size != self.seen.get(stream):
                self.seen[stream] = size
                self.grew[stream] = at_s
        quiet = [(at_s - t, s) for s, t in self.grew.items() if at_s - t >= self.stall_s]
        if not quiet:
            return None
        longest, stream = max(quiet)
        return Stall(stream, self.grew[stream], longest)


@dataclass(frozen=True)
class Request:
    """One request the soak finished: its stream, start (s into the soak), latency, curl's exit."""

    stream: str
    start_s: float
    e2e_s: float
    exit_code: int


def parse_done(text: str, started_ns: int | None) -> list[Request]:
    """The job's `done` lines, `STREAM START_NS END_NS EXIT`; start relative to the first."""
    rows = []
    for line in text.splitlines():
        parts = line.split()
        if len(parts) == 4 and all(p.lstrip("-").isdigit() for p in parts[1:]):
            rows.append((parts[0], int(parts[1]), int(parts[2]), int(parts[3])))
    base = started_ns if started_ns is not None else min((r[1] for r in rows), default=0)
    return [Request(s, (a - base) / 1e9, (b - a) / 1e9, code) for s, a, b, code in rows]


def latency_rise(requests: list[Request]) -> tuple[float, float] | None:
    """(first third's median e2e, last third's) when the last is RISE times the first or more;
    None when it held, or with too few requests (under 6) to say."""
    good = sorted((r for r in requests if r.exit_code == 0), key=lambda r: r.start_s)
    if len(good) < 6:
        return None
    third = len(good) // 3
    first = statistics.median(r.e2e_s for r in good[:third])
    last = statistics.median(r.e2e_s for r in good[-third:])
    return (first, last) if first > 0 and last / first >= RISE else None


def signs(log: str) -> list[str]:
    """The lines of `log` that show a hang or a crash, in order, without repeats."""
    found: list[str] = []
    for line in log.splitlines():
        text = line.strip()
        if text and SIGNS.search(text) and text not in found:
            found.append(text)
    return found


def span(seconds: float) -> str:
    """`4 min 12 s`, `30 min`, `45 s`: a soak's times as an operator reads them."""
    whole = round(seconds)
    minutes, secs = divmod(whole, 60)
    if not minutes:
        return f"{secs} s"
    return f"{minutes} min" + (f" {secs} s" if secs else "")
