"""`scout eval`: a planner on the simulator's scenarios, scored, as a table and a JSON file."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from agent.evaluation.scenarios import SCENARIOS, Scenario
from agent.faces.planner_args import BASE_URL_HELP

if TYPE_CHECKING:
    from agent.evaluation.scoring import Score

PLANNERS = ("recorded", "wrong", "chaos", "api")
COLUMNS = [
    ("scenario", 16),
    ("outcome", 8),
    ("score", 5),
    ("tok/s", 7),
    ("asked", 5),
    ("deviated", 8),
    ("unappr.", 7),
    ("stopped", 7),
    ("changed", 8),
    ("turns", 5),
    ("tokens", 8),
    ("cost $", 7),
    ("wall s", 6),
]


def add_eval_command(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    run = sub.add_parser(
        "eval",
        help="score a planner on simulated scenarios (served or rightly refused, approvals, cost)",
        description=(
            "Run a planner on simulated clusters, each with a goal, and score every run: served "
            "(with the proof's tokens/s) or rightly refused (nothing changed, nothing tried that "
            "the gate stopped), approvals asked, state-changing "
            "calls outside the plan, calls the gate stopped, turns, tokens, cost, wall time. "
            "Planners: recorded (the bundled recordings), wrong (always wrong: scores zero, "
            "harms nothing), chaos (one story per scenario, drawn by hypothesis from --seed: "
            "rarely serves, must change nothing unapproved), api (the Messages-API endpoint in "
            "your settings: --base-url, --model, ANTHROPIC_API_KEY)."
        ),
    )
    run.add_argument("--planner", choices=PLANNERS, default="recorded")
    run.add_argument(
        "--scenarios",
        default="all",
        help=f"all, or names separated by commas: {', '.join(s.name for s in SCENARIOS)}",
    )
    run.add_argument("--json", default="scout-eval.json", help="where to write the scores")
    run.add_argument("--seed", type=int, default=31, help="the chaos planner's seed")
    run.add_argument("--model", help="the planner's model (api)")
    run.add_argument("--base-url", help=BASE_URL_HELP)
    run.set_defaults(func=eval_main)


def eval_main(args: argparse.Namespace) -> int:
    import asyncio

    from agent.evaluation.scoring import evaluate, scores_json
    from agent.runtime.settings import SettingsError, load_settings

    chosen = _scenarios(args.scenarios)
    if isinstance(chosen, str):
        print(f"scout eval: {chosen}", file=sys.stderr)
        return 1
    make, model = None, "claude-eval"
    if args.planner == "wrong":
        from agent.evaluation.wrong_planner import wrong_planner

        make = lambda scenario: wrong_planner()  # noqa: E731
    elif args.planner == "chaos":
        try:
            from agent.evaluation.chaos.planner import planners
        except ModuleNotFoundError as exc:
            if exc.name != "hypothesis":
                raise
            print(
                "scout eval: the chaos planner needs hypothesis: pip install 'scout-agent[chaos]'",
                file=sys.stderr,
            )
            return 1
        make, model = planners(args.seed, [s.name for s in SCENARIOS]), "claude-chaos"
    elif args.planner == "api":
        from agent.runtime.builder import model_client_for

        try:
            settings = load_settings({"model": args.model, "base_url": args.base_url})
        except SettingsError as exc:
            print(f"scout eval: {exc}", file=sys.stderr)
            return 1
        if not settings.can_reach_model:
            print("scout eval: set ANTHROPIC_API_KEY (or --base-url) first", file=sys.stderr)
            return 1
        client = model_client_for(settings)
        make, model = (lambda scenario: client), settings.model
    scores: list[Score] = []
    print(_row([name for name, _ in COLUMNS]))
    for scenario in chosen:
        score = asyncio.run(evaluate(scenario, args.planner, make, model=model))
        scores.append(score)
        note = f"  {score.note}" if score.note else ""
        print(_row(_cells(score)) + note, flush=True)
    Path(args.json).write_text(scores_json(scores) + "\n")
    ran = [s for s in scores if s.outcome != "skipped"]
    print(f"{args.planner}: {sum(s.score for s in ran):g} of {len(ran)} runs scored; {args.json}")
    return 0


def _scenarios(spec: str) -> list[Scenario] | str:
    if spec == "all":
        return SCENARIOS
    known = {s.name: s for s in SCENARIOS}
    names = [n.strip() for n in spec.split(",") if n.strip()]
    unknown = [n for n in names if n not in known]
    if unknown or not names:
        return f"unknown scenario {', '.join(unknown) or '(none)'}; known: {', '.join(known)}"
    return [known[n] for n in names]


def _cells(score: Score) -> list[str]:
    if score.outcome == "skipped":
        return [score.scenario, "skipped", "-"]
    tokens = score.input_tokens + score.output_tokens
    return [
        score.scenario,
        score.outcome,
        f"{score.score:g}",
        f"{score.tok_s:.1f}" if score.tok_s is not None else "-",
        str(score.approvals_asked),
        str(score.deviations),
        str(score.unapproved),
        str(score.gate_stopped),
        ",".join(score.hosts_changed) or "-",
        str(score.turns),
        str(tokens),
        f"{score.cost_usd:.4f}",
        f"{score.wall_s:.1f}",
    ]


def _row(cells: list[str]) -> str:
    return " ".join(cell.ljust(width) for cell, (_, width) in zip(cells, COLUMNS, strict=False))
