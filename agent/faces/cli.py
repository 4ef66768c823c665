"""`scout` command line. Heavy imports happen inside each command, so `--help` starts fast."""

from __future__ import annotations

import argparse
import os
import sys
from typing import TYPE_CHECKING, NoReturn

from agent.faces.library_warnings import route_library_warnings
from agent.faces.logs import keep_logs_off_the_screen
from agent.faces.planner_args import add_planner_flags, planner_flags
from agent.faces.process_exit import end_process
from agent.faces.pydantic_plugins import keep_pydantic_plugins_out
from agent.faces.recon_command import add_recon_command

if TYPE_CHECKING:
    from agent.runtime.settings import Settings

EXIT_OK, EXIT_ERROR, EXIT_STOPPED = 0, 1, 2


def _fail(command: str, message: str, code: int = EXIT_ERROR) -> int:
    print(f"scout {command}: {message}", file=sys.stderr)
    return code


def _cmd_replay(args: argparse.Namespace) -> int:
    from agent.faces.replay import replay_main

    if args.sim and _load_settings({}, log=True) is None:  # the simulator and SSH log to a file
        return EXIT_ERROR
    return replay_main(args.file, verbose=args.verbose, scenario=args.sim)


def _load_settings(flags: dict, *, log: bool = False) -> Settings | None:
    """Settings from file, env and flags; with `log`, logging goes to the settings' log file."""
    from agent.runtime.settings import SettingsError, load_settings

    try:
        settings = load_settings(flags)
    except SettingsError as exc:
        print(f"scout: {exc}", file=sys.stderr)
        return None
    if log:
        from agent.faces.failures import writable_folder
        from agent.faces.log_file import configure_logging

        problem = writable_folder(settings.log_file.parent, "the log folder")
        if problem is not None:
            print(f"scout: {problem}", file=sys.stderr)
            return None
        configure_logging(settings.log_file, settings.redactor)
    return settings


def _cmd_run(args: argparse.Namespace) -> int:
    import asyncio

    from agent.faces.failures import inventory_problem, transcripts_problem
    from agent.faces.headless import run_goal
    from agent.faces.resume_file import resumed

    settings = _load_settings(
        {
            "inventory": args.inventory,
            **planner_flags(args),
            "trust_new_hosts": args.trust_new_hosts or None,
            "webhook_url": args.webhook_url,
            "webhook_secret_env": args.webhook_secret_env,
            "webhook_allow_insecure_http": args.webhook_allow_http or None,
        },
        log=True,
    )
    if settings is None:
        return EXIT_ERROR
    problem = inventory_problem(settings) or transcripts_problem(settings)
    if problem is not None:
        return _fail("run", problem)
    if not args.goal and not args.resume:
        return _fail("run", "say what to do with --goal (or continue a session with --resume)")
    resume = resumed(args.resume, settings)
    if isinstance(resume, str):
        return _fail("run", resume)
    secret = os.environ.get(settings.webhook_secret_env)
    return asyncio.run(
        run_goal(
            settings,
            args.goal,
            approvals=args.approvals,
            webhook_url=settings.webhook_url,
            webhook_secret=secret,
            resume=resume,
        )
    )


def _cmd_chat(args: argparse.Namespace) -> int:
    import asyncio

    from agent.faces.chat import chat
    from agent.faces.failures import inventory_problem, transcripts_problem
    from agent.faces.resume_file import resumed
    from agent.runtime.builder import model_client_for

    settings = _load_settings(
        {
            "inventory": args.inventory,
            **planner_flags(args),
            "mode": args.mode,
            "trust_new_hosts": args.trust_new_hosts or None,
        },
        log=True,
    )
    if settings is None:
        return EXIT_ERROR
    if not settings.can_reach_model:
        return _fail(
            "chat", "no API key. Set ANTHROPIC_API_KEY, or try `scout demo`, which needs none."
        )
    if (problem := inventory_problem(settings) or transcripts_problem(settings)) is not None:
        return _fail("chat", problem)
    resume = resumed(args.resume, settings)
    if isinstance(resume, str):
        return _fail("chat", resume)
    client = model_client_for(settings)
    return asyncio.run(chat(settings, client, resume=resume))


def _cmd_demo(args: argparse.Namespace) -> int:
    import asyncio

    from agent.faces.console import screen_console
    from agent.faces.demo import live_demo, replay_demo
    from agent.faces.failures import transcripts_problem
    from agent.replay.recordings import DEMO_RECORDING, missing_message, recording_path
    from agent.runtime.builder import new_transcript

    settings = _load_settings({"model": args.model}, log=True)
    if settings is None:
        return EXIT_ERROR
    if (problem := transcripts_problem(settings)) is not None:
        return _fail("demo", problem)
    save_to = new_transcript(settings, "demo")
    console = screen_console()
    if args.live:
        if not settings.can_reach_model:
            return _fail("demo --live", "set ANTHROPIC_API_KEY first")
        return asyncio.run(live_demo(console, settings, save_to))
    with recording_path(args.transcript or DEMO_RECORDING) as transcript:
        if transcript is None:
            return _fail("demo", missing_message(args.transcript))
        return asyncio.run(
            replay_demo(
                console,
                interactive=args.interactive,
                transcript=transcript,
                pace_s=0.0 if args.fast else 0.012,
                save_to=save_to,
                scenario=args.sim,
            )
        )


def _cmd_init(args: argparse.Namespace) -> int:
    from agent.faces.init_files import init_main

    return init_main(args.dir, force=args.force)


def _cmd_doctor(args: argparse.Namespace) -> int:
    import asyncio

    from agent.faces.console import screen_console
    from agent.faces.doctor import print_checks, run_checks

    settings = _load_settings({"inventory": args.inventory}, log=True)
    if settings is None:
        return EXIT_ERROR
    checks = asyncio.run(run_checks(settings, settings.inventory))
    print_checks(screen_console(), checks)
    return EXIT_OK if all(check.ok for check in checks) else EXIT_ERROR


def _scout_parser() -> tuple[argparse.ArgumentParser, argparse._SubParsersAction]:
    parser = argparse.ArgumentParser(
        prog="scout",
        description=(
            "Scout stands a large LLM up across GPU hosts: reconnaissance, a plan, gated action, "
            "proof. Every session is a transcript that can be replayed."
        ),
    )
    return parser, parser.add_subparsers(dest="cmd", metavar="COMMAND")


def parser_for(argv: list[str]) -> argparse.ArgumentParser:
    """The parser for `argv`: recon's alone when `recon` is the command (it parses what the
    whole tree would, and prints the same usage and errors: a subcommand's flags are its own),
    so its hosts are asked before the other faces' modules load (recon_command); else all."""
    if argv[:1] == ["recon"]:
        parser, sub = _scout_parser()
        add_recon_command(sub, _load_settings)
        return parser
    return build_parser()


def build_parser() -> argparse.ArgumentParser:
    from agent.faces.daytwo import add_daytwo_commands
    from agent.faces.evaluate import add_eval_command
    from agent.faces.exec_one import add_exec_command
    from agent.faces.mcp_face import add_mcp_commands
    from agent.faces.policy_args import add_policy_commands
    from agent.faces.read import add_read_command
    from agent.faces.recipes_cmd import add_recipes_command
    from agent.faces.upgrade_face import add_upgrade_command

    parser, sub = _scout_parser()

    replay = sub.add_parser(
        "replay",
        help="re-render a recorded session (no side effects)",
        description="Re-render a recorded session transcript: messages, calls, results, decisions.",
    )
    replay.add_argument(
        "file", help="a transcript file (.jsonl), or a bundled recording such as seed-pair-deploy"
    )
    replay.add_argument("-v", "--verbose", action="store_true", help="show tool output lines")
    replay.add_argument(
        "--sim",
        metavar="SCENARIO",
        help="re-drive the session against a fresh simulated cluster (tools run for real) and "
        "report any drift; exit 1 on drift",
    )
    replay.set_defaults(func=_cmd_replay)

    chat = sub.add_parser(
        "chat",
        help="a conversation in the terminal: streamed answers, live batches, inline approvals",
        description=(
            "Talk to Scout in the terminal. Enter sends, Esc Enter adds a line, Ctrl-C stops "
            "the running batch, Ctrl-D leaves. /help lists the slash commands."
        ),
    )
    chat.add_argument("--inventory", help="inventory YAML of the hosts")
    add_planner_flags(chat)
    chat.add_argument("--mode", choices=["plan", "ask", "auto-safe", "ci"], help="approval mode")
    chat.add_argument(
        "--trust-new-hosts", action="store_true", help="accept and record unknown host keys"
    )
    chat.add_argument(
        "--resume",
        metavar="TRANSCRIPT",
        help="continue a recorded session (calls it left unfinished are reported as unknown; "
        "its jobs are found on their hosts)",
    )
    chat.set_defaults(func=_cmd_chat)

    run = sub.add_parser(
        "run",
        help="headless: pursue a goal, approvals by webhook (or none in ci), JSON events on stdout",
        description=(
            "Run one goal without a terminal. Events stream to stdout as JSON lines (the "
            "transcript's event types). Exit status: 0 done, 2 stopped by a denial or a budget, "
            "1 error."
        ),
    )
    run.add_argument("--goal", help="what Scout should achieve (optional with --resume)")
    run.add_argument(
        "--resume",
        metavar="TRANSCRIPT",
        help="continue a recorded session: its jobs are found on their hosts first",
    )
    run.add_argument("--inventory", help="inventory YAML of the hosts")
    run.add_argument(
        "--approvals",
        choices=["webhook", "ci"],
        default="ci",
        help="webhook: ask the webhook for every gated step; ci: deny whatever needs a human",
    )
    run.add_argument("--webhook-url", help="where approval requests are POSTed")
    run.add_argument(
        "--webhook-secret-env",
        help="name of the environment variable holding the webhook's shared secret",
    )
    run.add_argument(
        "--webhook-allow-http",
        action="store_true",
        help="allow a plain http:// webhook on another host (approvals travel unencrypted)",
    )
    add_planner_flags(run)
    run.add_argument(
        "--trust-new-hosts", action="store_true", help="accept and record unknown host keys"
    )
    run.set_defaults(func=_cmd_run)
    add_recon_command(sub, _load_settings)

    demo = sub.add_parser(
        "demo",
        help="the whole story on a simulated two-Spark cluster: no API key, no network",
        description="Start a simulated pair of DGX Sparks, replay a recorded deployment from zero "
        "through the chat face with every tool live against the simulator, end with tokens/s.",
    )
    demo.add_argument("--interactive", action="store_true", help="answer the approvals yourself")
    demo.add_argument("--fast", action="store_true", help="no pacing of the replayed text")
    demo.add_argument(
        "--live", action="store_true", help="a real model drives the simulated cluster (API key)"
    )
    demo.add_argument("--transcript", help="replay another recorded session instead")
    demo.add_argument("--sim", help="the scenario that --transcript was recorded on")
    demo.add_argument("--model", help="model for --live")
    demo.set_defaults(func=_cmd_demo)

    init = sub.add_parser(
        "init",
        help="write a commented inventory and settings file to start from",
        description="Write inventory.yaml and settings.yaml (default folder: ~/.scout).",
    )
    init.add_argument("--dir", help="folder to write into (default ~/.scout or $SCOUT_HOME)")
    init.add_argument("--force", action="store_true", help="replace existing files")
    init.set_defaults(func=_cmd_init)

    doctor = sub.add_parser(
        "doctor",
        help="check settings, API key, SSH, host keys and Docker access; change nothing",
        description=(
            "Check what Scout needs, without changing anything: the settings, the API key, the "
            "inventory, known_hosts, SSH to every host (through its jump host) and Docker access "
            "on each. Every failed check says how to fix it. Exit status 1 if any check failed."
        ),
    )
    doctor.add_argument("--inventory", help="inventory YAML (default from settings)")
    doctor.set_defaults(func=_cmd_doctor)

    add_policy_commands(sub, _load_settings)
    add_exec_command(sub, _load_settings)
    add_eval_command(sub)
    add_daytwo_commands(sub, _load_settings)
    add_upgrade_command(sub, _load_settings)
    add_recipes_command(sub)
    add_mcp_commands(sub, _load_settings)
    add_read_command(sub)
    return parser


def main(argv: list[str] | None = None) -> int:
    route_library_warnings()  # before any command imports a library that warns as it loads
    keep_pydantic_plugins_out()  # before any command builds a model
    keep_logs_off_the_screen()  # until the command opens its log file, if it opens one
    os.umask(0o077)  # what Scout writes (transcripts, logs, caches, copies) is the user's alone
    argv = sys.argv[1:] if argv is None else argv
    parser = parser_for(argv)
    args = parser.parse_args(argv)
    if not getattr(args, "func", None):
        parser.print_help()
        return EXIT_OK
    try:
        code = args.func(args)
        sys.stdout.flush()  # a reader gone shows here, not in the interpreter's last flush
        return code
    except BrokenPipeError:
        from agent.faces.failures import reader_gone

        return reader_gone()
    except KeyboardInterrupt:
        from agent.faces.failures import EXIT_INTERRUPTED

        print("\nscout: interrupted", file=sys.stderr)
        return EXIT_INTERRUPTED
    except Exception as exc:
        from agent.faces.failures import explain

        message = explain(exc)
        if message is None:
            raise
        return _fail(args.cmd, message)


def program() -> NoReturn:
    """`scout` as a program (its console script, `python -m agent.faces.cli`): main's status
    ends the process, without the interpreter's teardown where the face asked (process_exit)."""
    end_process(main())


if __name__ == "__main__":
    program()
