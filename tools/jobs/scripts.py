"""The shell Scout sends to start, read and stop jobs: POSIX sh, the same on every host.
(The status script, which must stay cheap for many jobs, is status_script.py.)

Each script prints lines that begin with a random token (`records.py` reads them), so nothing a
job logs can be mistaken for them. The runner writes its own pid, ignores the signals meant for
its job only long enough to record the job's exit status, and is what `setsid` makes the leader
of the job's session and process group: stopping the job signals that whole group.
"""

from __future__ import annotations

import shlex

from tools.jobs.folder import JOB_ROOT, check_name, job_dir
from tools.jobs.in_container import in_container, stop_inside
from tools.jobs.status_script import install_program
from tools.ssh.remote_command import MARKER_ENV

START_WAIT_TRIES = 200  # × 0.05 s for the runner to write its pid
# The runner: records its start time (field 22 of its /proc stat, to tell a reused pid) and
# pid, runs the job, records when it ended (clock and uptime) and its exit status.
RUNNER = (
    'd=$1; c=$2; read -r s < "/proc/$$/stat"; s=${s##*) }; set -- $s; '
    'echo "${20}" > "$d/pidstart"; echo $$ > "$d/pid"; trap : HUP INT TERM; sh -c "$c"; '
    'code=$?; date +%s > "$d/ended"; read -r up _ < /proc/uptime; echo "${up%.*}" > "$d/endup"; '
    'echo "$code" > "$d/exit"'
)

# Is pid $1 still the runner that recorded start time $2 (empty: any process with that pid)?
_ALIVE = (
    'alive() { [ -r "/proc/$1/stat" ] || return 1; [ -n "$2" ] || return 0; '
    'read -r s < "/proc/$1/stat"; s=${s##*) }; set -- "$2" $s; [ "$1" = "${21}" ]; }'
)


def start_script(name: str, command: str, token: str) -> str:
    """Create the job folder, start the runner detached, wait for its pid; print `T started`.

    A plain `docker exec` runs with its pid recorded in the container (in_container.py), so
    that stopping the job can end it there too; the folder keeps the command as given.
    """
    d = job_dir(name)
    inside = in_container(command, name)
    run = inside.wrapped if inside is not None else command
    remember = [f"printf '%s\\n' {shlex.quote(inside.container)} > {d}/inside"] if inside else []
    return "\n".join(
        [
            f'mkdir -p "{JOB_ROOT}" || exit 70',
            install_program(),
            f"if ! mkdir {d} 2>/dev/null; then",
            f"  if [ -d {d} ]; then echo '{token} exists'; exit 0; fi",
            f'  echo "cannot create the job folder {JOB_ROOT}/{name}" >&2; exit 73',
            "fi",
            f"printf '%s\\n' {shlex.quote(command)} > {d}/command",
            *remember,
            f"date +%s > {d}/started",
            f'read -r up _ < /proc/uptime; echo "${{up%.*}}" > {d}/startup',
            f"pwd > {d}/cwd",
            f"unset {MARKER_ENV}",  # the job outlives this call: a stop of the call must not end it
            f"setsid sh -c {shlex.quote(RUNNER)} scout-job {d} {shlex.quote(run)} "
            f"< /dev/null > {d}/log 2>&1 &",
            "i=0",
            f'while [ ! -s {d}/pid ]; do i=$((i+1)); [ "$i" -gt {START_WAIT_TRIES} ] && break; '
            "sleep 0.05; done",
            f"if [ ! -s {d}/pid ]; then echo '{token} nopid'; exit 0; fi",
            f"read -r pid < {d}/pid; read -r t < {d}/started",
            f'echo "{token} started $pid $t"',
        ]
    )


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
    """TERM each job's process group, KILL it after `grace_s`; print what happened per job
    (and, for a job in a container, `T inside WORD CONTAINER` for its process there, which a
    dead client leaves running whatever state the job itself is in)."""
    tries = max(1, round(grace_s * 10))
    return "\n".join(
        [
            f"T={token}",
            _ALIVE,
            "group() {",
            '  if [ -s "$d/exit" ]; then read -r e < "$d/exit"; echo "$T ended $e"; return; fi',
            '  if [ ! -s "$d/pid" ]; then echo "$T notrunning"; return; fi',
            '  read -r pid < "$d/pid"; since=',
            '  [ -s "$d/pidstart" ] && read -r since < "$d/pidstart"',
            '  if ! alive "$pid" "$since"; then echo "$T notrunning"; return; fi',
            '  date +%s > "$d/stop"',
            '  kill -TERM "-$pid" 2>/dev/null',
            "  i=0",
            f'  while kill -0 "-$pid" 2>/dev/null && [ "$i" -lt {tries} ]; do i=$((i+1)); '
            "sleep 0.1; done",
            '  if kill -0 "-$pid" 2>/dev/null; then kill -KILL "-$pid" 2>/dev/null; '
            'echo "$T killed"; else echo "$T terminated"; fi',
            "}",
            "for n in " + " ".join(check_name(n) for n in names) + "; do",
            f'  d="{JOB_ROOT}/$n"; echo "$T job $n"',
            '  if [ ! -d "$d" ]; then echo "$T missing"; continue; fi',
            "  group",
            stop_inside(tries=max(1, round(grace_s * 2))),
            "done",
            'echo "$T end"',
        ]
    )
