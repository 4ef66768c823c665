"""The proof that a served model works and how fast: the phases, run together where they can.

Health and the model list first (both cheap, and nothing else is worth asking of an engine that
fails them); then the checked generations (generation_checks.py), alone: their needle is a
prompt near --max-model-len whose prefill would slow every stream measured beside it; then the
measurement: the engine's own benchmark inside its container (engine_bench.py), or, where the
image has no benchmark or the engine is not one this session started, Scout's own streams
(endpoint.py), labelled as such. Then the report (bench_report.py) with the single-stream
ceiling (physics.py) and the fingerprint (fingerprint.py) with what each node's engine says it
runs (node_identity.py); last, where the operator asked for one, the soak (soak.py), whose
verdict ends the proof.
"""

from __future__ import annotations

import asyncio
import secrets
import textwrap
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from pathlib import Path

from tools.deploy.proof.bench_budget import CALIBRATION_PROMPTS, QUICK_BUDGET_S
from tools.deploy.proof.engine_bench import (
    FIRST_WARMUPS,
    MEASURED,
    SEED_SPAN,
    Sweep,
    image_lacks_bench,
    run_bench,
)
from tools.deploy.proof.fallback_bench import own_measurement, own_method
from tools.deploy.proof.fingerprint import Served, fingerprint, served
from tools.deploy.proof.generation_checks import GenerationChecks, check_generation
from tools.deploy.proof.http import EndpointClient, EndpointError
from tools.deploy.proof.node_identity import from_facts, read_identities
from tools.deploy.proof.physics import Ceiling, ceiling
from tools.deploy.proof.report import WIDTH, Report, Row, render_table, summarise, write_files
from tools.deploy.proof.soak import Soak, SoakSpec, run_soak
from tools.deploy.rollout.state import SessionState
from tools.ssh.pool import SSHPool
from tools.world.store import WorldStore

ENGINE_BENCH = "vllm bench serve"


@dataclass
class Proof:
    model: str
    models: list[str]
    generation: GenerationChecks
    report: Report
    files: tuple[Path, Path] | None
    soak: Soak | None = field(default=None)
    mode: str = "quick"

    def render(self) -> str:
        """The headline, the report, the soak's verdict: what the model reads and the demo ends
        with."""
        text = f"{self.headline()}\n{render_report(self)}"
        return text + (f"\n{self.soak.render()}" if self.soak is not None else "")

    def headline(self) -> str:
        parts = [f"health ok · model {self.model} · {self.generation.render()}"]
        rows = self.report.rows
        single = next((r for r in rows if r.concurrency == 1), None)
        if single is not None and single.tok_s_per_user:
            ttft, how = single.ttft_ms.get("p50"), ""
            if ttft is None and single.ttft_mean_ms is not None:
                ttft, how = single.ttft_mean_ms, f" (mean, n={single.requests})"
            said = f", TTFT {ttft / 1000:.2f} s{how}" if ttft is not None else ""
            rate = f"{single.tok_s_per_user:.1f} tok/s"
            parts.append(f"{self.mode} sweep: single stream {rate}{said}")
        if rows and rows[-1].concurrency > 1:
            widest = rows[-1]
            parts.append(
                f"{widest.concurrency} streams {widest.tok_s_aggregate:.1f} tok/s aggregate"
            )
        return " · ".join(parts)


def render_report(proof: Proof) -> str:
    """The table, what the fingerprint found the nodes disagree on (an NCCL build, a driver:
    each with its fix, said where the operator reads the numbers), the files."""
    text = render_table(proof.report)
    for said in proof.report.fingerprint.get("nodes_disagree", []):
        wrapped = textwrap.wrap(
            f"NODES DIFFER: {said}", WIDTH, subsequent_indent="  ", break_on_hyphens=False
        )
        text += "\n" + "\n".join(wrapped)
    if proof.files:
        text += f"\nchart: {proof.files[0]}\ndata: {proof.files[1]}"
    return text


@dataclass(frozen=True)
class Where:
    """How the proof reaches the engine and what the session knows about it."""

    pool: SSHPool
    host: str
    port: int
    state: SessionState
    world: WorldStore | None
    folder: Path | None


async def prove(
    client: EndpointClient,
    where: Where,
    *,
    model: str | None,
    sweep: Sweep,
    generation_timeout_s: float,
    bench_timeout_s: float,
    report: Callable[[str], None],
    soak: SoakSpec | None = None,
) -> Proof:
    await client.health()
    lengths = await client.models()
    models = list(lengths)
    if model is None:
        if not models:
            raise EndpointError(f"{client.where} serves no model (/v1/models is empty)")
        model = models[0]
    elif model not in models:
        listed = ", ".join(models) or "none"
        raise EndpointError(f"{client.where} does not serve {model}; /v1/models lists: {listed}")
    engine = served(where.state, where.host, where.port)
    # seeds no earlier proof used: none of this sweep's prompts is in the engine's prefix cache
    sweep = replace(fitted(sweep, lengths[model], engine), seed_base=secrets.randbelow(SEED_SPAN))
    identities = asyncio.create_task(_identities(where, engine))  # reads only: runs alongside
    try:
        generation = await check_generation(
            client, model, lengths[model], timeout_s=generation_timeout_s
        )
        source, rows, commands, sweep = await _measure(
            client, where, engine, model, sweep, bench_timeout_s, report
        )
    except BaseException:
        identities.cancel()
        raise
    soaked = await _soak(where, engine, model, soak, report)
    result = Report(
        source=source,
        rows=rows,
        targets={"ttft": sweep.ttft_ms, "tpot": sweep.tpot_ms} if source == ENGINE_BENCH else {},
        ceiling=_ceiling(where, engine, model),
        flag=None,
        fingerprint=fingerprint(where.world, model, engine, commands, await identities),
        method=method(sweep) if source == ENGINE_BENCH else own_method(sweep),
        unmeasured=sweep.budget.unmeasured if sweep.budget and source == ENGINE_BENCH else {},
    )
    if came_up := where.state.readiness.get(f"{where.host}:{where.port}"):
        result.fingerprint["readiness"] = came_up
    single = next((r for r in rows if r.concurrency == 1), None)
    if isinstance(result.ceiling, Ceiling) and single and single.tok_s_per_user:
        result.flag = result.ceiling.judge(single.tok_s_per_user)
    files = None
    if where.folder is not None:
        try:
            files = write_files(result, where.folder, f"proof-{where.host}-{where.port}")
        except OSError as exc:
            said = (exc.strerror or str(exc)).lower()
            report(
                f"the chart and JSON could not be written: {exc.filename or where.folder}: "
                f"{said} (folder {where.folder})"
            )
    return Proof(model, models, generation, result, files, soaked, sweep.mode)


def method(sweep: Sweep) -> str:
    """How the engine's benchmark was run, in words the report prints."""
    if sweep.budget is not None:
        plan = sweep.budget
        levels = ", ".join(
            f"c={lv.concurrency} {lv.measured} over {lv.runs} run{'s' if lv.runs > 1 else ''}"
            for lv in plan.levels
        )
        said = (
            f"quick, a {QUICK_BUDGET_S:.0f} s budget planned from {CALIBRATION_PROMPTS} timed "
            f"warm-ups ({plan.single_s:.1f} s a request): measured requests {levels}; a round "
            "of warm-ups at each level's concurrency, discarded"
        )
    else:
        said = (
            f"{sweep.mode}, {MEASURED[sweep.mode]:,} measured requests per level over "
            f"{sweep.runs} runs; {FIRST_WARMUPS[sweep.mode]} warm-ups before the sweep and a "
            "round before each run, discarded"
        )
    said += (
        f"; fresh prompts (seeds {sweep.seed_base + 1}…, none reused); each run's first prompt "
        "left out (its warm-ups cached it); outputs fixed at "
        f"{sweep.output_len} tokens; the checks ran before, not during"
    )
    return said + ("; p99 needs `full`" if sweep.mode == "quick" else "")


async def _soak(
    where: Where, engine: Served | None, model: str, spec: SoakSpec | None,
    report: Callable[[str], None],
) -> Soak | None:  # fmt: skip
    """The soak after the sweep, where one was asked; it needs an engine this session started
    (its containers' logs are what it reads)."""
    if spec is None or spec.seconds <= 0:
        return None
    if engine is None or not (engine.containers or engine.container):
        return Soak(spec, missing="no engine this session started serves this port")
    return await run_soak(where.pool, where.host, engine, model, where.port, spec, report=report)


async def _identities(where: Where, engine: Served | None) -> dict:
    """What each node's engine container says it runs, over what recon knew of the node."""
    if engine is None or not engine.containers:
        return {}
    hosts = where.world.hosts if where.world is not None else {}
    known = {node: from_facts(hosts.get(node), "") for node in engine.containers}
    return await read_identities(where.pool, engine.containers, known)


def fitted(sweep: Sweep, max_model_len: int | None, engine: Served | None) -> Sweep:
    """The sweep as this engine can take it: prompts that fit its --max-model-len, and the
    model's own path as the tokenizer where the served name differs from it."""
    if max_model_len and sweep.input_len + sweep.output_len > max_model_len:
        sweep = replace(sweep, input_len=max(1, max_model_len - sweep.output_len - 16))
    words = engine.command.split() if engine else []
    if "serve" in words[:-1]:
        sweep = replace(sweep, tokenizer=words[words.index("serve") + 1])
    return sweep


async def _measure(
    client: EndpointClient,
    where: Where,
    engine: Served | None,
    model: str,
    sweep: Sweep,
    timeout_s: float,
    report: Callable[[str], None],
) -> tuple[str, list[Row], list[str], Sweep]:
    """(what measured, its rows, the benchmark's commands, the sweep as it ran)."""
    if engine is None or engine.container is None:
        why = "no engine this session started serves this port, so no container to run in"
    elif "vllm serve" not in engine.command:
        why = "the engine is not vLLM; its benchmark is not wired here yet"
    else:
        report(f"running {ENGINE_BENCH} in {engine.container}")
        bench = await run_bench(
            where.pool, where.host, engine.container, model, where.port, sweep,
            timeout_s=timeout_s, report=report,
        )  # fmt: skip
        if bench.results and bench.missing is None:
            targets = {"ttft": sweep.ttft_ms, "tpot": sweep.tpot_ms}
            ran = bench.sweep or sweep
            return ENGINE_BENCH, summarise(bench.results, targets), bench.commands, ran
        if image_lacks_bench(bench.missing):
            why = f"the image has no `{ENGINE_BENCH}`: {bench.missing}"
        else:
            why = f"`{ENGINE_BENCH}` failed: {bench.missing}"
    rows = await own_measurement(client, model, sweep)
    return f"Scout's own streams, not the engine's benchmark — {why}", rows, [], sweep


def _ceiling(where: Where, engine: Served | None, model: str) -> Ceiling | str:
    facts = where.world.hosts.get(where.host) if where.world is not None else None
    gpus = facts.gpu.gpus if facts is not None else []
    nodes = len(engine.hosts) if engine and engine.hosts else 1
    return ceiling(model, gpus[0].name if gpus else None, nodes)
