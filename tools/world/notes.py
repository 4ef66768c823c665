"""A belief the model recorded (world_note), kept apart from what a command printed."""

from datetime import datetime

from pydantic import BaseModel


class Note(BaseModel):
    """A belief the model recorded, with the evidence it gave; not a probed fact."""

    belief: str
    evidence: str
    host: str | None = None
    recorded_at: datetime
