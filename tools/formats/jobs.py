"""Job logs as formats: each job reader's own log signs (tools/jobs/progress/readers.py) make it
recognisable in a paste too, and the job's progress reading is what the paste says: how far it
came, the error line that ended it, what it is stuck on, or why it will not finish."""

from __future__ import annotations

from tools.formats.format import Format, Sign, Told, sign
from tools.jobs.progress import read_progress
from tools.jobs.progress.bench import read_nccl_tests, read_perftest
from tools.jobs.progress.docker_pull import read_docker_pull
from tools.jobs.progress.engine import read_engine
from tools.jobs.progress.errors import first_error, may_hold_error
from tools.jobs.progress.hf import read_hf_download
from tools.jobs.progress.lines import screen_lines
from tools.jobs.progress.readers import READERS
from tools.jobs.progress.rsync import read_rsync
from tools.recon.parsers.errors import ParseError

_LOG_SIGNS = {reader: pattern for _command, pattern, reader in READERS}
_NAMES = {
    read_hf_download: "hf download log",
    read_docker_pull: "docker pull log",
    read_rsync: "rsync log",
    read_engine: "engine log (vLLM, SGLang)",
    read_nccl_tests: "nccl-tests log",
    read_perftest: "perftest log",
}


def read_job_log(text: str) -> Told:
    progress = read_progress("", text)
    facts: dict[str, object] = {"kind": progress.kind, "progress": progress.summary}
    if progress.fraction is not None:
        facts["fraction"] = f"{progress.fraction:.0%}"
    facts.update({key: value for key, value in progress.facts.items() if value not in (None, "")})
    findings = []
    if progress.error:
        findings.append(f"failed: {progress.error}")
    if "will_not_finish" in progress.facts:
        findings.append(f"will not finish: {progress.facts['will_not_finish']}")
    if progress.waiting:
        findings.append(f"stuck waiting: {progress.waiting}")
    return facts, findings


# The engines' own log line: vLLM's `INFO 04-01 02:46:00 [file.py:214]`, behind its workers'
# `(VllmWorkerProcess pid=…)` prefixes.
_ENGINE_LINE = (
    r"^(?:\([\w:]+ pid=\d+[^)]*\) )*(?:INFO|WARNING|ERROR|DEBUG) \d\d-\d\d \d\d:\d\d:\d\d "
)


# What a log shows of its tool besides the lines its job reader goes by.
_EXTRA_SIGNS = {
    read_engine: (sign(_ENGINE_LINE),),
    read_hf_download: (
        sign(r"huggingface_hub/\S+\.py:\d+: |^downloading https://huggingface\.co/"),
    ),
}


def _has_error_line(text: str) -> bool:
    """The error grammar finds an error line in it (errors.py): a log known by its failure."""
    return may_hold_error(text) and first_error(screen_lines(text)) is not None


def read_error_log(text: str) -> Told:
    """A log known by its error line alone: what failed, in the log's own words."""
    facts, findings = read_job_log(text)
    if not findings:
        raise ParseError("a log with an error line", text)
    return facts, findings


def _job(name: str, *signs: Sign) -> Format:
    return Format(name, signs, read_job_log)


FORMATS = (
    *(
        _job(name, Sign(_LOG_SIGNS[reader].search), *_EXTRA_SIGNS.get(reader, ()))
        for reader, name in _NAMES.items()
    ),
    _job(
        "ray start log",
        sign(r"Ray runtime started|ray start --address|Local node IP:"),
        sign(r"To (?:connect|terminate)", 0.3),
    ),
    _job(
        "pip install log",
        sign(
            r"^(?:#\d+ [\d.]+ )?(?:Collecting \S|Requirement already satisfied: |"
            r"Successfully installed |ERROR: (?:Could not find a version|"
            r"No matching distribution))"
        ),
        sign(r"Looking in indexes: |WARNING: Retrying \(Retry\("),
    ),
    Format("a log that failed", (Sign(_has_error_line),), read_error_log),
)
