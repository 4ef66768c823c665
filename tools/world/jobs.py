"""A job as the world model keeps it: one compact, typed fact per job on a host.

The job tools hand these to the world store (tools/jobs/world_facts.py) from what they just
read: a start, a status round, each poll of a wait, a stop. `unknown` is the state of a job
whose host did not answer: Scout cannot tell, so it never says failed.
"""

from datetime import datetime

from pydantic import BaseModel

FINISHED_STATES = frozenset({"exited", "stopped", "lost", "missing"})
COMMAND_CHARS = 120
TAIL_CHARS = 1000


class JobFact(BaseModel):
    host: str
    name: str
    command: str = ""  # the first COMMAND_CHARS characters, whitespace folded
    state: str  # starting, running, exited, stopped, lost, missing, unknown
    exit_code: int | None = None
    elapsed_s: int | None = None
    progress: str | None = None  # the progress reader's one-line summary
    fraction: float | None = None
    ready: bool = False
    tail: str = ""  # the end of the log, kept once the job has finished
    why_unknown: str | None = None
    seen_at: datetime

    @property
    def key(self) -> str:
        return f"{self.host}/{self.name}"

    @property
    def finished(self) -> bool:
        return self.state in FINISHED_STATES


def command_summary(command: str) -> str:
    folded = " ".join(command.split())
    return folded if len(folded) <= COMMAND_CHARS else folded[: COMMAND_CHARS - 1] + "…"
