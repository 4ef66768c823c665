"""What Scout measured itself: a verified serving endpoint, a fabric test between nodes."""

from datetime import datetime

from pydantic import BaseModel

from tools.world.findings import Finding


class Endpoint(BaseModel):
    """A serving endpoint Scout verified, with what it measured there."""

    where: str
    model: str | None = None
    single_stream_tok_s: float | None = None
    ttft_s: float | None = None
    aggregate_tok_s: float | None = None
    concurrency: int | None = None
    checked_at: datetime


class FabricMeasurement(BaseModel):
    """A fabric test Scout ran between nodes (the rollout's all_gather_perf), what it measured,
    and the finding when that is far below the link (tools/deploy/fabric/nccl_test.py)."""

    host: str  # where the test ran (the head)
    nodes: list[str]  # the ranks' hosts, as the run printed them
    test: str
    busbw_gb_s: float
    link_gbit: float
    finding: Finding | None = None
    measured_at: datetime
