"""The shell Scout sends to start, inspect and stop jobs: POSIX sh, the same on every host.

Each script prints lines that begin with a random token (`records.py` reads them), so nothing a
job logs can be mistaken for them. The runner writes its own pid, ignores the signals meant for
its job only long enough to record the job's exit status, and is what `setsid` makes the leader
of the job's session and process group: stopping the job signals that whole group.
"""

from __future__ import annotations

import shlex

from tools.jobs.folder import JOB_ROOT, check_name, job_dir

START_WAIT_TRIES = 200  # × 0.05 s for the runner to write its pid
TAIL_BYTES = 3000
MILESTONE_BYTES = 3000
LIST_LIMIT = 40
# Lines worth keeping from the whole log (grep -E): image layers, per-file downloads, the start
# of fabric benchmark tables, readiness and errors.
MILESTONES = (
    r"^[0-9a-f]{12}: (Pulling fs layer|Already exists|Pull complete)|: Pulling from |"
    r"Downloading '|Download complete|Traceback|Error|ERROR|error:|"
    r"Application startup complete|fired up and ready|^# nccl-tests|BW Test|Device +:|#bytes"
)

RUNNER = (
    'd=$1; echo $$ > "$d/pid"; trap : HUP INT TERM; sh -c "$2"; code=$?; '
    'date +%s > "$d/ended"; echo "$code" > "$d/exit"'
)

# Is the runner of job folder "$2" alive as pid $1? (the pid may have been reused since)
_ALIVE = (
    'alive() { [ -r "/proc/$1/cmdline" ] && '
    "tr '\\0' '\\n' < \"/proc/$1/cmdline\" | grep -qxF \"$2\"; }"
)


def start_script(name: str, command: str, token: str) -> str:
    """Create the job folder, start the runner detached, wait for its pid; print `T started`."""
    d = job_dir(name)
    return "\n".join(
        [
            f'mkdir -p "{JOB_ROOT}" || exit 70',
            f"if ! mkdir {d} 2>/dev/null; then",
            f"  if [ -d {d} ]; then echo '{token} exists'; exit 0; fi",
            f'  echo "cannot create the job folder {JOB_ROOT}/{name}" >&2; exit 73',
            "fi",
            f"printf '%s\\n' {shlex.quote(command)} > {d}/command",
            f"date +%s > {d}/started",
            f"pwd > {d}/cwd",
            f"setsid sh -c {shlex.quote(RUNNER)} scout-job {d} {shlex.quote(command)} "
            f"< /dev/null > {d}/log 2>&1 &",
            "i=0",
            f'while [ ! -s {d}/pid ]; do i=$((i+1)); [ "$i" -gt {START_WAIT_TRIES} ] && break; '
            "sleep 0.05; done",
            f"if [ ! -s {d}/pid ]; then echo '{token} nopid'; exit 0; fi",
            f"read -r pid < {d}/pid; read -r t < {d}/started",
            f'echo "{token} started $pid $t"',
        ]
    )


def status_script(names: list[str] | None, token: str, until: str | None = None) -> str:
    """One record per job (all of them when `names` is None), then `T end`.

    A record: `T job NAME`, then `T missing`, or the folder's one-line files (`T started …`,
    `T ended …`, `T exit …`, `T stop …`, `T pid …`), `T alive` when the runner runs, `T size N`
    (log bytes), and the blocks `T command`, `T milestones`, `T match` (first line matching
    `until`, when given) and `T tail`, each running to the next token line.
    """
    loop = (
        "for n in " + " ".join(check_name(n) for n in names) + "; do"
        if names is not None
        else f'c=0; for p in "$R"/*; do [ -d "$p" ] || continue; c=$((c+1)); '
        f'[ "$c" -gt {LIST_LIMIT} ] && break; n=${{p##*/}}'
    )
    match = (
        f'  echo "$T match"; grep -aEm1 -e {shlex.quote(until)} "$d/log" 2>/dev/null '
        "| head -c 400; echo"
        if until
        else ""
    )
    lines = [
        f"T={token}",
        f'R="{JOB_ROOT}"',
        _ALIVE,
        'echo "$T now $(date +%s)"',
        loop,
        '  d="$R/$n"; echo "$T job $n"',
        '  if [ ! -d "$d" ]; then echo "$T missing"; continue; fi',
        "  for f in started ended exit stop pid; do",
        '    if [ -s "$d/$f" ]; then read -r v < "$d/$f"; echo "$T $f $v"; fi',
        "  done",
        '  if [ -s "$d/pid" ] && [ ! -s "$d/exit" ]; then read -r pid < "$d/pid"; '
        'alive "$pid" "$d" && echo "$T alive"; fi',
        '  echo "$T size $(wc -c < "$d/log" 2>/dev/null || echo 0)"',
        '  echo "$T command"; head -c 400 "$d/command" 2>/dev/null; echo',
        f'  echo "$T milestones"; grep -aE {shlex.quote(MILESTONES)} "$d/log" 2>/dev/null '
        f"| tail -n 60 | tail -c {MILESTONE_BYTES}; echo",
        *([match] if match else []),
        f'  echo "$T tail"; tail -c {TAIL_BYTES} "$d/log" 2>/dev/null; echo',
        "done",
        'echo "$T end"',
    ]
    return "\n".join(lines)


def logs_script(name: str, token: str, lines: int, max_bytes: int, grep: str | None) -> str:
    """The last `lines` lines of the log (only those matching `grep`, when given)."""
    d = job_dir(name)
    source = (
        f"grep -aE -e {shlex.quote(grep)} {d}/log | tail -n {lines}"
        if grep
        else f"tail -n {lines} {d}/log"
    )
    return "\n".join(
        [
            f"if [ ! -d {d} ]; then echo '{token} missing'; exit 0; fi",
            f'echo "{token} size $(wc -c < {d}/log 2>/dev/null || echo 0)"',
            f"echo '{token} log'",
            f"{source} 2>/dev/null | tail -c {max_bytes}",
        ]
    )


def stop_script(names: list[str], token: str, grace_s: float) -> str:
    """TERM each job's process group, KILL it after `grace_s`; print what happened per job."""
    tries = max(1, round(grace_s * 10))
    lines = [
        f"T={token}",
        _ALIVE,
        "for n in " + " ".join(check_name(n) for n in names) + "; do",
        f'  d="{JOB_ROOT}/$n"; echo "$T job $n"',
        '  if [ ! -d "$d" ]; then echo "$T missing"; continue; fi',
        '  if [ -s "$d/exit" ]; then read -r c < "$d/exit"; echo "$T ended $c"; continue; fi',
        '  if [ ! -s "$d/pid" ]; then echo "$T notrunning"; continue; fi',
        '  read -r pid < "$d/pid"',
        '  if ! alive "$pid" "$d"; then echo "$T notrunning"; continue; fi',
        '  date +%s > "$d/stop"',
        '  kill -TERM "-$pid" 2>/dev/null',
        "  i=0",
        f'  while kill -0 "-$pid" 2>/dev/null && [ "$i" -lt {tries} ]; do i=$((i+1)); '
        "sleep 0.1; done",
        '  if kill -0 "-$pid" 2>/dev/null; then kill -KILL "-$pid" 2>/dev/null; '
        'echo "$T killed"; else echo "$T terminated"; fi',
        "done",
        'echo "$T end"',
    ]
    return "\n".join(lines)
