"""The soak: after the sweep, the operator's concurrency held for a chosen time while Scout
watches for a stall, a latency rise, an engine restart and the log lines of a hang.

Why: a benchmark of a minute says nothing of a hang that comes later. TP=2 across two Sparks
with NCCL builds that differ served for 20-26 minutes of 4-way load before it wedged; the fix was
proven by a 60-minute soak, 420 of 420 requests (vLLM issue #41725).

The load is a durable job (tools/jobs/) on the head, so it outlives Scout's connection: `c`
streams, each a loop of streamed chat completions sent with `curl -N` to the engine's port until
the time is up, every stream's bytes in a file of its own in the job's folder and one line per
request in `requests` (its start, end and curl's exit). Scout reads the files' sizes every few
seconds: a stream whose file did not grow for `stall_s` is a stall, and the soak ends there with
the stall's time and the engine's log lines, read from `docker logs` of each node's engine
container.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import shlex
import time
from collections.abc import Callable
from dataclasses import dataclass, field

from tools.deploy.proof.fingerprint import Served
from tools.deploy.proof.soak_watch import (
    Request,
    Stall,
    StreamWatch,
    latency_rise,
    parse_done,
    signs,
)
from tools.deploy.proof.soak_watch import span as said_span
from tools.jobs.folder import job_dir
from tools.jobs.host import JobCommandError, start_job, stop_jobs
from tools.ssh.errors import SSHError
from tools.ssh.pool import SSHPool

SOAK_JOB = "scout-soak"
REAL_HOSTS_S = 1800.0  # what to ask on real hosts: past the 20-26 min of issue #41725
LOG_LINES = 400
SIGN_LINES = 12


@dataclass(frozen=True)
class SoakSpec:
    """How long, at what concurrency, and how long a stream may go without a token."""

    seconds: float
    concurrency: int
    stall_s: float = 60.0
    output_len: int = 256
    poll_s: float = 5.0


@dataclass
class Soak:
    """What the soak saw; `stall` None and no `trouble`: it held."""

    spec: SoakSpec
    ran_s: float = 0.0
    requests: list[Request] = field(default_factory=list)
    stall: Stall | None = None
    trouble: list[str] = field(default_factory=list)  # restarts, failed requests, latency rise
    log_lines: dict[str, list[str]] = field(default_factory=dict)  # node → its signs
    missing: str | None = None  # why it could not run

    @property
    def held(self) -> bool:
        return self.missing is None and self.stall is None and not self.trouble

    def render(self) -> str:
        """The proof's last line, then any log lines: what the operator and the model read."""
        c = self.spec.concurrency
        if self.missing:
            return f"soak: not run ({self.missing})"
        done = f"{len(self.requests)} requests"
        if self.stall is not None:
            s = self.stall
            head = (
                f"soak: STALL under c={c} at {said_span(s.since_s)}: stream {s.stream} got no "
                f"token for {said_span(s.quiet_s)} ({done} finished before it)"
            )
        elif self.trouble:
            said = "; ".join(self.trouble)
            head = f"soak: trouble under c={c} in {said_span(self.ran_s)}: {said}"
        else:
            head = f"soak: held for {said_span(self.ran_s)} under c={c}, 0 stalls ({done})"
        extra = [t for t in self.trouble if self.stall is not None]
        lines = [head, *(f"  also: {t}" for t in extra)]
        for node, found in self.log_lines.items():
            lines += [f"  {node} engine log: {line}" for line in found[-SIGN_LINES:]]
        if self.stall is not None and not self.log_lines:
            lines.append("  the engine logs show no Xid/NCCL/watchdog line yet")
        return "\n".join(lines)


def soak_command(spec: SoakSpec, model: str, port: int, folder: str) -> str:
    """The job: `concurrency` loops of streamed completions until `seconds` have passed."""
    body = json.dumps({
        "model": model, "stream": True, "max_tokens": spec.output_len, "ignore_eos": True,
        "messages": [{"role": "user", "content": "Count upward from 1, one number a line."}],
    })  # fmt: skip
    limit = int(spec.seconds + 4 * spec.stall_s + 60)  # a request may hang; the watch says so
    curl = (
        f"curl -sN -m {limit} -H 'Content-Type: application/json' -d {shlex.quote(body)} "
        f"http://127.0.0.1:{port}/v1/chat/completions"
    )
    return (
        f"d={folder}; end=$(( $(date +%s) + {int(spec.seconds)} )); "
        'stream() { while [ "$(date +%s)" -lt "$end" ]; do a=$(date +%s%N); '
        f'{curl} >> "$d/stream-$1"; r=$?; '
        'echo "$1 $a $(date +%s%N) $r" >> "$d/requests"; done; }; '
        f'k=0; while [ $k -lt {spec.concurrency} ]; do k=$((k+1)); : > "$d/stream-$k"; '
        'stream $k & done; wait; echo "soak ended: $(wc -l < "$d/requests") requests"'
    )


def _read_command(folder: str) -> str:
    """Each stream's size, `ended` once the job's runner wrote its exit, then the requests."""
    return (
        f"cd {folder} 2>/dev/null || exit 0; for f in stream-*; do "
        'echo "size ${f#stream-} $(wc -c < "$f")"; done; [ -f exit ] && echo ended; '
        f"echo @@done; cat {folder}/requests 2>/dev/null"
    )


async def run_soak(
    pool: SSHPool,
    host: str,
    engine: Served,
    model: str,
    port: int,
    spec: SoakSpec,
    *,
    report: Callable[[str], None],
) -> Soak:
    """Start the load as a job on `host`, watch it until its time is up or a stream stalls, then
    read the engine's logs and state on every node."""
    soak = Soak(spec)
    folder = job_dir(SOAK_JOB)  # the job's own folder, which its runner made
    containers = engine.containers or ({host: engine.container} if engine.container else {})
    before = await _engine_states(pool, containers)
    try:
        started = await start_job(pool, host, SOAK_JOB, soak_command(spec, model, port, folder))
    except (SSHError, JobCommandError) as exc:
        soak.missing = f"the load job did not start on {host}: {exc}"
        return soak
    if started.exists:
        soak.missing = f"a job named {SOAK_JOB} already exists on {host}; stop it first"
        return soak
    report(f"soak: {spec.concurrency} streams for {said_span(spec.seconds)} on {host}:{port}")
    began = time.monotonic()
    watch = StreamWatch(spec.stall_s)
    text = ""
    while True:
        await asyncio.sleep(spec.poll_s)
        at_s = time.monotonic() - began
        try:
            read = await pool.run(host, _read_command(folder), timeout=30)
        except SSHError:
            continue  # reading again changes nothing; the job runs on
        text = read.stdout
        sizes = {w[1]: int(w[2]) for w in (line.split() for line in text.splitlines())
                 if len(w) == 3 and w[0] == "size" and w[2].isdigit()}  # fmt: skip
        ended = "\nended\n" in f"\n{text}"
        if not ended and (stall := watch.observe(at_s, sizes)):
            soak.stall = stall
            break
        if ended or at_s > spec.seconds + 4 * spec.stall_s + 120:
            break
    soak.ran_s = time.monotonic() - began
    soak.requests = parse_done(text.partition("@@done\n")[2], None)
    if soak.stall is not None:
        report(f"soak: stream {soak.stall.stream} stalled; stopping the load")
        with contextlib.suppress(SSHError, JobCommandError):
            await stop_jobs(pool, host, [SOAK_JOB], grace_s=2.0)
    await _judge(pool, soak, containers, before, int(time.time() - soak.ran_s))
    return soak


async def _judge(
    pool: SSHPool,
    soak: Soak,
    containers: dict[str, str],
    before: dict[str, str],
    since: int,
) -> None:
    """Restarts, failed requests, latency rise and each node's log lines since the soak began."""
    after = await _engine_states(pool, containers)
    for node, state in before.items():
        if after.get(node) != state:
            soak.trouble.append(f"the engine on {node} restarted or stopped ({state} → "
                                f"{after.get(node) or 'gone'})")  # fmt: skip
    failed = [r for r in soak.requests if r.exit_code != 0]
    if failed and soak.stall is None:
        soak.trouble.append(f"{len(failed)} of {len(soak.requests)} requests failed "
                            f"(curl exit {failed[0].exit_code})")  # fmt: skip
    if rose := latency_rise(soak.requests):
        soak.trouble.append(f"latency rose: median end-to-end {rose[0]:.1f} s in the first third, "
                            f"{rose[1]:.1f} s in the last")  # fmt: skip
    for node, container in containers.items():
        command = f"docker logs --since {since} --tail {LOG_LINES} {shlex.quote(container)} 2>&1"
        try:
            read = await pool.run(node, command, timeout=30)
        except SSHError:
            continue
        if found := signs(read.stdout):
            soak.log_lines[node] = found
    if soak.log_lines and soak.stall is None and not soak.trouble:
        soak.trouble.append("the engine logged hang or error lines")


async def _engine_states(pool: SSHPool, containers: dict[str, str]) -> dict[str, str]:
    """Node → `STARTED_AT RESTARTS STATUS` of its engine container (a restart changes it)."""
    states = {}
    fmt = "'{{.State.StartedAt}} {{.RestartCount}} {{.State.Status}}'"
    for node, container in containers.items():
        try:
            read = await pool.run(
                node, f"docker inspect --format {fmt} {shlex.quote(container)}", timeout=30
            )
        except SSHError:
            continue
        if read.ok and read.stdout.strip():
            states[node] = read.stdout.strip()
    return states
