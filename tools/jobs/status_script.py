"""The status script: every job of a host read in one round trip, by one `awk`.

A poll of many jobs must cost about what one `true` over SSH costs (bench/jobs.py), so the host
starts no process per job: the shell lists the job folders and one POSIX awk reads each
folder's one-line files (elapsed times come from the host's uptime, so no `date` runs),
checks the runner is alive (its /proc stat, start time compared with
the one it recorded, so a reused pid does not count), and reads the log once for its size, its
last bytes, its milestone lines and the first line matching `until`. It prints the records
`records.py` reads, each line behind the call's random token.

The awk program is most of the script's bytes, and sending it costs more than running it; so
starting a job also leaves the program in the job root (named by its hash, so a changed program
is a new file), and a poll only names it. A poll of named jobs is then one simple command,
`awk -f PROGRAM FOLDER…` (`status_command`), that the login shell starts under `timeout` with
no `sh -c` in between: a shell started before awk cost a poll more than all its reading
(bench/jobs.py). A listing of all jobs needs the shell's glob (`status_script`). Where the
program is missing, the poll fails before its first record (or, listing, says so), and the
caller sends the script with the program inline once (`inline=True`).

Where the connection has the wall's fork-server, a poll of named jobs reads neither: the job
reader resident in the wall (tools/jobs/walled_read.py, tools/wall/host_job_reader.py) prints
these same records from this module's limits and MILESTONES, with no session or awk a poll.
"""

from __future__ import annotations

import hashlib
import shlex

from tools.jobs.folder import JOB_ROOT, check_name

TAIL_BYTES = 1000
MILESTONE_LINES = 60
MILESTONE_CHARS = 1500
COMMAND_CHARS = 400
LIST_LIMIT = 40


def _any_case(word: str) -> str:
    """An ERE for `word` in any case: POSIX awk has no case-blind flag."""
    return "".join(f"[{c.upper()}{c.lower()}]" if c.isalpha() else c for c in word)


# Lines worth keeping from the whole log (an ERE every awk reads: no interval expressions such as
# `{12}`, which mawk 1.3.4 — Debian 12's and Ubuntu 22.04's awk — does not know): image layers,
# per-file downloads, an engine's start, the start of fabric benchmark tables, readiness, what a
# job waits on, and every word the error grammar starts from (progress/errors.py), in any case.
MILESTONES = "|".join(
    [
        "[0-9a-f]" * 12 + ": (Pulling fs layer|Already exists|Pull complete)",
        ": Pulling from |Status: (Downloaded|Image is up)|Unable to find image|Downloading '",
        "Download complete|exit status|exit code|exited with",
        "Traceback|[A-Za-z](Error|Exception|Failure)|hit an exception",
        *(_any_case(w) for w in ("error", "fatal", "failed to", "failure", "panic")),
        *(_any_case(w) for w in ("waiting for", "no space left", "out of memory", "killed")),
        "version [0-9]|EngineCore|LLM engine|checkpoint shards|Loading (safetensors|weights)",
        "Application startup complete|fired up and ready|# nccl-tests|BW Test|Device +:|#bytes",
    ]
)

_AWK = r"""
function first(path,   line) {
    line = ""
    if ((getline line < path) <= 0) line = ""
    close(path)
    return line
}
function fact(d, f,   v) {
    v = first(d "/" f)
    if (v != "") print T " " f " " v
    return v
}
function clip(text, n) { return length(text) > n ? substr(text, length(text) - n + 1) : text }
function alive(pid, since,   stat, parts) {
    if (pid == "") return 0
    stat = first("/proc/" pid "/stat")
    if (stat == "") return 0
    sub(/.*\) /, "", stat)
    split(stat, parts, " ")
    return since == "" || parts[20] == since
}
function ended(d) {  # the runner writes ended, endup, then exit
    fact(d, "ended"); fact(d, "endup"); fact(d, "stop")
}
function job(d,   name, code, pid, since, text, line, size, tail, k, m, found, i) {
    name = d; sub(/.*\//, "", name)
    print T " job " name
    text = ""
    while ((getline line < (d "/command")) > 0) text = text line "\n"
    close(d "/command")
    if (fact(d, "started") == "" && text == "") { print T " missing"; return }
    fact(d, "startup")
    code = fact(d, "exit")
    pid = fact(d, "pid"); since = fact(d, "pidstart")
    if (code != "") ended(d)
    else if (alive(pid, since)) print T " alive"
    else if (fact(d, "exit") != "") ended(d)  # it ended while this read
    else fact(d, "stop")
    size = 0; tail = ""; k = 0; found = ""
    while ((getline line < (d "/log")) > 0) {
        size += length(line) + 1
        if (line ~ M) { k++; m[k % ML] = index(line, "\r") ? clip(line, MC) : substr(line, 1, MC) }
        if (U != "" && found == "" && line ~ U) found = substr(line, 1, 400)
        tail = tail line "\n"
        if (length(tail) > 2 * TB) tail = clip(tail, TB)
    }
    close(d "/log")
    print T " size " size
    print T " command"; print substr(text, 1, CC)
    print T " milestones"
    for (i = (k > ML ? k - ML + 1 : 1); i <= k; i++) print m[i % ML]
    if (U != "") { print T " match"; print found }
    print T " tail"; print clip(tail, TB)
}
BEGIN {
    T = ENVIRON["T"]; U = ENVIRON["U"]; M = @MILESTONES@
    TB = @TAIL@; ML = @LINES@; MC = @CHARS@; CC = @COMMAND@
    split(first("/proc/uptime"), up, ".")
    print T " uptime " up[1]
    for (a = 1; a < ARGC; a++) job(ARGV[a])
    print T " end"
    exit
}
"""


def _awk_string(text: str) -> str:
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'


PROGRAM = (
    _AWK.replace("@MILESTONES@", _awk_string(MILESTONES))
    .replace("@TAIL@", str(TAIL_BYTES))
    .replace("@LINES@", str(MILESTONE_LINES))
    .replace("@CHARS@", str(MILESTONE_CHARS))
    .replace("@COMMAND@", str(COMMAND_CHARS))
)
PROGRAM_FILE = f".status-{hashlib.sha256(PROGRAM.encode()).hexdigest()[:12]}.awk"
NO_PROGRAM = "noprogram"


def install_program() -> str:
    """Shell that leaves the awk program in the job root (run by the start script)."""
    return (
        f'[ -s "{JOB_ROOT}/{PROGRAM_FILE}" ] || '
        f"printf '%s' {shlex.quote(PROGRAM)} > \"{JOB_ROOT}/{PROGRAM_FILE}\""
    )


def status_env(token: str, until: str | None) -> dict[str, str]:
    """What the program reads from its environment (never through awk's `-v`, which would
    expand backslashes in the `until` pattern)."""
    return {"T": token, "U": until or "", "LC_ALL": "C"}


def status_command(names: list[str]) -> str:
    """The status read as one simple command: awk runs the program left in the job root.

    Run without `sh -c` (SSHPool.run's `shell=False`) and with `status_env`, it is all a poll
    starts on the host. Where the program is missing, or the login shell cannot run it, awk
    fails before printing a record, and the caller runs `status_script(…, inline=True)`.
    """
    folders = (f'"{JOB_ROOT}/{check_name(n)}"' for n in names)
    return " ".join(["awk", f'-f "{JOB_ROOT}/{PROGRAM_FILE}"', *folders])


def status_script(
    names: list[str] | None, token: str, until: str | None = None, *, inline: bool = False
) -> str:
    """One record per job (all of them, up to LIST_LIMIT, when `names` is None), then `T end`.

    First `T uptime SECONDS`. A record: `T job NAME`, then `T missing`, or the folder's one-line
    files (`T started …`, `T ended …`, `T exit …`, `T stop …`, `T pid …`, `T pidstart …`,
    `T startup …`, `T endup …`), `T alive` when the runner runs, `T size N`
    (log bytes), and the blocks `T command`, `T milestones`, `T match` (the first log line
    matching `until`, when given) and `T tail`, each running to the next token line. Without
    `inline`, only `T noprogram` when the job root holds no copy of the program.
    """
    if names is not None:
        folders = " ".join(f'"$R/{check_name(n)}"' for n in names)
        collect = f"set -- {folders}"
    else:
        collect = (
            'set --; for d in "$R"/*; do [ -d "$d" ] && set -- "$@" "$d"; '
            f'[ "$#" -ge {LIST_LIMIT} ] && break; done'
        )
    program = shlex.quote(PROGRAM) if inline else f'-f "$R/{PROGRAM_FILE}"'
    lines = [f'R="{JOB_ROOT}"']
    if not inline:
        lines.append(
            f'[ -r "$R/{PROGRAM_FILE}" ] || {{ echo {shlex.quote(token)} {NO_PROGRAM}; exit 0; }}'
        )
    exports = " ".join(
        f"{key}={shlex.quote(value)}" for key, value in status_env(token, until).items()
    )
    return "\n".join(
        [
            *lines,
            collect,
            f"{exports}; export T U LC_ALL",
            f'exec awk {program} "$@"',  # awk replaces the shell: no fork
        ]
    )
