"""Progress read from a job's log, for the tools a deployment waits on.

Each module reads one tool's output as its real captures show it (tests/fixtures/jobs/):
downloads from the Hugging Face Hub, image pulls, rsync copies, engines loading (vLLM, SGLang)
and fabric benchmarks (nccl-tests, perftest). `read_progress` picks the reader by the job's
command, then by what the log says.
"""

from tools.jobs.progress.model import Progress
from tools.jobs.progress.readers import read_progress

__all__ = ["Progress", "read_progress"]
