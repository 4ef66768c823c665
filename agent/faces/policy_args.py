"""The argparse side of `scout policy classify|check` and `scout redact` (imports stay lazy).

Kept apart from `policy.py` so that building the command line never imports the classifier or
the tools: `scout --help` stays fast.
"""

from __future__ import annotations

import argparse
import sys
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from agent.faces.settings_loader import SettingsLoader

EXIT_OK, EXIT_ERROR, EXIT_USAGE = 0, 1, 2


def _cmd_policy_classify(args: argparse.Namespace) -> int:
    from agent.faces.policy import classify_file_main, classify_main

    if args.file is not None:
        if args.command:
            print("scout policy classify: give a command or --file, not both", file=sys.stderr)
            return EXIT_USAGE
        return classify_file_main(args.file)
    return classify_main(args.command)


def _cmd_policy_check(args: argparse.Namespace, load_settings: SettingsLoader) -> int:
    """The settings file's rules and mode, as a session reads them, then the flags'."""
    from agent.faces.policy import check_main

    settings = load_settings({"mode": args.mode})
    if settings is None:
        return EXIT_ERROR
    return check_main(
        args.call,
        settings_rules=settings.rules,
        allow=args.allow,
        ask=args.ask,
        deny=args.deny,
        session_allow=args.session_allow,
        mode=settings.mode,
    )


def _cmd_redact(args: argparse.Namespace, load_settings: SettingsLoader) -> int:
    settings = load_settings({})
    if settings is None:
        return EXIT_ERROR
    sys.stdout.write(settings.redactor().text(sys.stdin.read()))
    return EXIT_OK


def add_policy_commands(sub: Any, load_settings: SettingsLoader) -> None:
    """Add `policy classify`, `policy check` and `redact` to the `scout` subcommands."""
    policy = sub.add_parser(
        "policy",
        help="inspect the safety policy",
        description="Inspect the safety policy: how Scout judges a command or a whole call.",
    )
    policy_sub = policy.add_subparsers(dest="policy_cmd", metavar="ACTION", required=True)
    classify = policy_sub.add_parser(
        "classify",
        help="classify a shell command as read_only, mutating or destructive, and say why",
        description="Classify one command (quoted as one argument) and print every reason, or "
        "with --file classify each line of a file and print `label<TAB>command` per line.",
    )
    classify.add_argument("command", nargs="*", help="the command, quoted as one argument")
    classify.add_argument("--file", metavar="F", help="one command a line ('-': stdin)")
    classify.set_defaults(func=_cmd_policy_classify)
    check = policy_sub.add_parser(
        "check",
        help="judge one tool call against rules and a mode: RISK allow|ask|deny — why",
        description="Judge a tool call the way the gate would once a plan is approved, and print "
        "one line: `RISK DECISION — why` (DECISION is allow, ask or deny). The settings file's "
        "rules and mode apply as in a session; --allow/--ask/--deny add rules in the settings "
        'syntax, e.g. ssh_exec(host=spark-*, command="docker restart vllm_*").',
    )
    check.add_argument(
        "--call", required=True, metavar="JSON", help='{"tool": "ssh_exec", "input": {…}}'
    )
    for effect, article in (("allow", "an"), ("ask", "an"), ("deny", "a")):
        check.add_argument(
            f"--{effect}",
            action="append",
            default=[],
            metavar="RULE",
            help=f"{article} {effect} rule",
        )
    check.add_argument(
        "--session-allow",
        action="append",
        default=[],
        metavar="JSON",
        help="a call the operator answered `a` (allow exactly this) to, as for --call",
    )
    check.add_argument(
        "--mode",
        choices=["plan", "ask", "auto-safe", "ci"],
        help="approval mode (default: the settings')",
    )
    check.set_defaults(func=lambda args: _cmd_policy_check(args, load_settings))

    redact = sub.add_parser(
        "redact",
        help="print standard input as Scout would record it, secrets masked",
        description="Read text on standard input and print it with secrets masked, exactly as "
        "Scout writes it to transcripts, logs and the screen.",
    )
    redact.set_defaults(func=lambda args: _cmd_redact(args, load_settings))
