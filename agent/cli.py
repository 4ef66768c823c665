"""`scout` command line. Heavy imports happen inside each command, so `--help` starts fast."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

EXIT_OK, EXIT_ERROR, EXIT_STOPPED = 0, 1, 2


def _cmd_replay(args: argparse.Namespace) -> int:
    from rich.console import Console

    from agent.render import EventRenderer
    from agent.transcript import read_transcript

    path = Path(args.file)
    if not path.is_file():
        print(f"scout replay: no such transcript: {path}", file=sys.stderr)
        return EXIT_ERROR
    loaded = read_transcript(path)
    console = Console(highlight=False)
    err = Console(stderr=True, highlight=False)
    for problem in loaded.problems:
        err.print(f"[yellow]warning:[/] {path}: {problem}")
    if not loaded.events:
        err.print(f"scout replay: {path} holds no readable events")
        return EXIT_ERROR
    renderer = EventRenderer(console, verbose=args.verbose)
    for event in loaded.events:
        renderer.render(event)
    return EXIT_OK


def _cmd_policy(args: argparse.Namespace) -> int:
    from agent.policy.cli import classify_main

    return classify_main(args.command)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="scout",
        description=(
            "Scout stands a large LLM up across GPU hosts: reconnaissance, a plan, gated action, "
            "proof. Every session is a transcript that can be replayed."
        ),
    )
    sub = parser.add_subparsers(dest="cmd", metavar="COMMAND")

    replay = sub.add_parser(
        "replay",
        help="re-render a recorded session (no side effects)",
        description="Re-render a recorded session transcript: messages, calls, results, decisions.",
    )
    replay.add_argument("file", help="transcript file (.jsonl)")
    replay.add_argument("-v", "--verbose", action="store_true", help="show tool output lines")
    replay.set_defaults(func=_cmd_replay)

    policy = sub.add_parser("policy", help="inspect the safety policy")
    policy_sub = policy.add_subparsers(dest="policy_cmd", metavar="ACTION", required=True)
    classify = policy_sub.add_parser(
        "classify",
        help="classify a shell command as read_only, mutating or destructive, and say why",
    )
    classify.add_argument("command", nargs="+", help="the command, quoted as one argument")
    classify.set_defaults(func=_cmd_policy)
    return parser


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if not getattr(args, "func", None):
        parser.print_help()
        return EXIT_OK
    try:
        return args.func(args)
    except KeyboardInterrupt:
        print("\nscout: interrupted", file=sys.stderr)
        return EXIT_STOPPED


if __name__ == "__main__":
    sys.exit(main())
