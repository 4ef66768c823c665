"""`scout chat`: a conversation in the terminal with streamed answers, live batches and approvals.

Enter sends; Esc then Enter adds a line; Ctrl-C while Scout works stops the running batch (or the
answer being streamed) and keeps the session; Ctrl-C at the prompt clears the line; Ctrl-D exits.
"""

from __future__ import annotations

import asyncio
import contextlib
import shutil
import signal
from collections.abc import Awaitable, Callable
from pathlib import Path

from prompt_toolkit import PromptSession
from prompt_toolkit.history import FileHistory, InMemoryHistory
from prompt_toolkit.key_binding import KeyBindings
from rich.console import Console
from rich.text import Text

from agent.daytwo.status import deployment_reader
from agent.faces.chat_view import ChatView
from agent.faces.console import screen_console
from agent.faces.failures import describe_os_error
from agent.faces.usage_view import cost_view
from agent.loop.model_turn import ModelClient
from agent.loop.resumed import RebuiltSession
from agent.runtime.builder import Runtime, open_runtime
from agent.runtime.settings import Settings, scout_home
from agent.safety.approvers.terminal import TerminalApprover
from agent.safety.modes import MODES
from agent.world.jobs_view import jobs_table
from agent.world.tables import print_tables

HELP = """\
/todo          the todo list
/world         what recon knows about every host, with findings
/jobs          the session's jobs on their hosts: state, progress, command
/plan          the proposed and the approved plan
/mode [MODE]   show or set the mode: plan, ask, auto-safe, ci
/cost          tokens per turn, cache reads and writes, cost, what compaction saved
/save [PATH]   copy the transcript to PATH
/read FILE     read a command's output (also pasted: /read, Esc Enter, then the output)
/help          this help
/exit          leave (Ctrl-D too)"""

Command = Callable[[Runtime, Console, str], Awaitable[None] | None]


def _keys() -> KeyBindings:
    keys = KeyBindings()

    @keys.add("escape", "enter")
    def _newline(event) -> None:  # type: ignore[no-untyped-def]
        event.current_buffer.insert_text("\n")

    return keys


def _cmd_todo(runtime: Runtime, console: Console, arg: str) -> None:
    console.print(runtime.session.todo.render())


def _cmd_world(runtime: Runtime, console: Console, arg: str) -> None:
    if not runtime.world.hosts and not runtime.world.unreachable:
        console.print("nothing probed yet: ask Scout to run recon")
        return
    print_tables(runtime.world, console)


def _cmd_jobs(runtime: Runtime, console: Console, arg: str) -> None:
    if not runtime.world.jobs:
        console.print("no jobs in this session yet")
        return
    console.print(jobs_table(runtime.world.jobs))


def _cmd_plan(runtime: Runtime, console: Console, arg: str) -> None:
    plan = runtime.state.plan
    if plan.approved is not None:
        console.print(Text(f"approved ({plan.approved_hash})", style="green"))
        console.print(plan.approved.render())
    elif plan.proposed is not None:
        console.print(Text("proposed, not approved", style="yellow"))
        console.print(plan.proposed.render())
    else:
        console.print("no plan yet: the session is read-only until one is approved")


def _cmd_mode(runtime: Runtime, console: Console, arg: str) -> None:
    if arg:
        if arg not in MODES:
            console.print(f"unknown mode {arg!r}; choose one of {', '.join(MODES)}")
            return
        runtime.gate.mode = arg  # type: ignore[assignment]
    console.print(f"mode: {runtime.gate.mode}")


def _cmd_cost(runtime: Runtime, console: Console, arg: str) -> None:
    console.print(cost_view(runtime.session.usage))


def _cmd_save(runtime: Runtime, console: Console, arg: str) -> None:
    """Copy the transcript (into PATH when it is a folder); a bad path is said, never fatal."""
    target = Path(arg).expanduser() if arg else Path.cwd()
    if target.is_dir():
        target = target / runtime.transcript_path.name
    try:
        shutil.copyfile(runtime.transcript_path, target)
    except OSError as exc:
        console.print(f"not saved: {describe_os_error(exc, str(target))}", markup=False)
        return
    console.print(f"saved the transcript to {target}", markup=False)


def _cmd_read(runtime: Runtime, console: Console, arg: str) -> None:
    """What an output says, read here without the model: pasted after `/read` on the lines
    that follow it, or in the file it names."""
    from agent.faces.read import describe
    from tools.formats import read_pasted

    first, _, pasted = arg.partition("\n")
    if not pasted.strip():
        if not first.strip():
            console.print("/read FILE, or /read then the output on the lines below it")
            return
        try:
            pasted = Path(first.strip()).expanduser().read_text(errors="replace")
        except OSError as exc:
            console.print(f"cannot read: {describe_os_error(exc, first.strip())}", markup=False)
            return
    console.print("\n".join(describe(read_pasted(pasted))), markup=False)


def _cmd_help(runtime: Runtime, console: Console, arg: str) -> None:
    console.print(HELP)


COMMANDS: dict[str, Command] = {
    "/todo": _cmd_todo,
    "/world": _cmd_world,
    "/jobs": _cmd_jobs,
    "/plan": _cmd_plan,
    "/mode": _cmd_mode,
    "/cost": _cmd_cost,
    "/save": _cmd_save,
    "/read": _cmd_read,
    "/help": _cmd_help,
}


async def run_slash(
    line: str, runtime: Runtime, console: Console, commands: dict[str, Command]
) -> None:
    words = line.strip().split(maxsplit=1)
    name = words[0]
    command = commands.get(name)
    if command is None:
        console.print(f"unknown command {name}; /help lists them")
        return
    # what follows the name, its lines kept as they were (a pasted output's tabs and spaces)
    arg = line.lstrip()[len(name) :].strip(" ").rstrip()
    result = command(runtime, console, arg)
    if asyncio.iscoroutine(result):
        await result


async def _send(runtime: Runtime, view: ChatView, text: str) -> None:
    """Run one message; Ctrl-C interrupts the work, not the program."""
    loop = asyncio.get_running_loop()
    loop.add_signal_handler(signal.SIGINT, runtime.session.interrupt)
    try:
        await runtime.session.send(text)  # every stop but end_turn is shown by its own event
    finally:
        loop.remove_signal_handler(signal.SIGINT)
        view.settle()


async def chat(
    settings: Settings,
    client: ModelClient,
    *,
    console: Console | None = None,
    resume: RebuiltSession | None = None,
) -> int:
    """A chat session on the hosts of the settings' inventory (or one resumed from a transcript)."""
    console = console or screen_console()
    view = ChatView(console)
    approval_prompt: PromptSession[str] = PromptSession(history=InMemoryHistory())

    async def ask(question: str) -> str:
        return await view.ask(approval_prompt, question)

    async def ask_passphrase(question: str) -> str | None:
        try:  # a prompt of its own: its history, and the passphrase in it, ends with the answer
            return await view.ask(PromptSession(), question, secret=True)
        except (KeyboardInterrupt, EOFError):
            return None

    runtime = await open_runtime(
        settings,
        client=client,
        approver_factory=lambda rules: TerminalApprover(console, ask, rules),
        listeners=[view],
        resume=resume,
        passphrase_prompt=ask_passphrase,
        deployments=deployment_reader(settings.deployments_dir),
    )
    try:
        return await chat_on_runtime(runtime, view, console)
    finally:
        with contextlib.suppress(Exception):
            await runtime.aclose()


async def chat_on_runtime(
    runtime: Runtime, view: ChatView, console: Console, *, first_message: str | None = None
) -> int:
    """The conversation loop itself: prompt, send, show, until Ctrl-D or /exit."""
    history_path = scout_home() / "chat_history"
    history_path.parent.mkdir(parents=True, exist_ok=True)
    prompt: PromptSession[str] = PromptSession(
        history=FileHistory(str(history_path)), key_bindings=_keys()
    )
    settings_line = f"model {runtime.session.parts.model} · mode {runtime.gate.mode}"
    console.print(
        Text.assemble(
            ("Scout", "bold"),
            f" · {settings_line} · transcript {runtime.transcript_path}\n",
            ("Type a request. /help for commands, Ctrl-D to leave.", "dim"),
        )
    )
    try:
        if first_message:
            console.print(Text.assemble(("you › ", "bold cyan"), first_message))
            await _send(runtime, view, runtime.with_resume_note(first_message))
        while True:
            try:
                line = await prompt.prompt_async("scout › ")
            except KeyboardInterrupt:
                continue
            except EOFError:
                break
            if not line.strip():
                continue
            if line.strip() in {"/exit", "/quit"}:
                break
            if line.startswith("/"):
                await run_slash(line, runtime, console, COMMANDS)
                continue
            await _send(runtime, view, runtime.with_resume_note(line))
    finally:
        runtime.session.end("exited")
        console.print(Text(f"transcript saved: {runtime.transcript_path}", style="dim"))
    return 0
