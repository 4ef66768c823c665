"""`scout demo`: the whole story on a simulated two-Spark cluster, no API key, no network.

The story starts from zero (scenario fresh-pair: nothing pulled or downloaded, the worker without
internet). The recorded session's model turns are replayed through the chat face while every
tool runs live against a fresh simulated cluster; approvals are answered visibly as recorded (or
by you, with `--interactive`). A recording cannot follow a denial or an edit: the story then
stops there and says so. Another recording (`--transcript`) runs on the scenario it was recorded
on (`--sim`). `--live` lets a real model drive the same simulated cluster instead. Ctrl-C stops
the demo and its simulator cleanly (exit status 130)."""

from __future__ import annotations

import asyncio
from pathlib import Path

from prompt_toolkit import PromptSession
from rich.console import Console
from rich.text import Text

from agent.faces.chat_view import ChatView
from agent.faces.failures import EXIT_INTERRUPTED
from agent.faces.interrupt import Interrupted, until_interrupted
from agent.faces.render import print_report
from agent.loop.transcript import NotATranscript, read_session_file
from agent.replay.recorded_approvals import RecordedApprover
from agent.replay.redrive import RedriveResult, redrive, sim_runtime
from agent.runtime.settings import Settings
from agent.safety.approvals import ApprovalRequest, Approver, Decision
from agent.safety.approvers.terminal import TerminalApprover
from agent.safety.rules import RuleSet
from sim.scenario import load_scenario
from tools.text.new_files import NewFile

DEMO_SCENARIO = "fresh-pair"  # the story from zero (transcripts/fresh-pair-deploy)
DEMO_GOAL = (
    "Serve Qwen/Qwen3.5-122B-A10B-FP8 with tensor parallelism 2 across spark-a and spark-b, "
    "then prove it works and how fast it is."
)
EXIT_VERIFIED, EXIT_FAILED, EXIT_STOPPED = 0, 1, 2


class VisibleApprover:
    """Shows each approval the way the operator saw it, then the recorded answer."""

    def __init__(self, console: Console, inner: Approver, pause_s: float) -> None:
        self.console = console
        self.inner = inner
        self.pause_s = pause_s
        self.shower = TerminalApprover(console, ask=_never_asked)

    async def decide(self, request: ApprovalRequest) -> Decision:
        self.shower.show(request)
        await asyncio.sleep(self.pause_s)
        return await self.inner.decide(request)  # the decision event shows the answer


async def _never_asked(prompt: str) -> str:
    raise EOFError


class StopsAtDeparture:
    """Your answers in `--interactive`; after a denial or an edit, the rest are refused unasked.

    The recording only knows what happens after the answers it recorded, so once you answer
    otherwise the story must stop: later steps of the same batch are not offered any more.
    """

    def __init__(self, inner: Approver) -> None:
        self.inner = inner
        self.departure: tuple[ApprovalRequest, Decision] | None = None

    async def decide(self, request: ApprovalRequest) -> Decision:
        if self.departure is not None:
            return Decision(
                kind="denied",
                fingerprint=request.fingerprint,
                message="not asked: the demo stopped at an earlier answer",
                decided_by="the demo",
            )
        decision = await self.inner.decide(request)
        if decision.kind != "approved":
            self.departure = (request, decision)
        return decision


def departure_story(request: ApprovalRequest, decision: Decision) -> str:
    """What to tell the operator when the story stops at their answer: what did and did not run."""
    command = request.input.get("command")
    what = f"`{command}`" if isinstance(command, str) else request.tool
    where = f" on {', '.join(request.hosts)}" if request.hosts else ""
    answer = "edited" if decision.kind == "approved_with_edit" else "denied"
    return (
        f"You {answer} {what}{where}. The recording went on as if it had been approved, and a "
        "recording cannot follow another answer, so the story stops here: nothing after this "
        "point ran. `scout demo --live` lets a real model decide what to do next (it needs "
        "ANTHROPIC_API_KEY)."
    )


async def replay_demo(
    console: Console,
    *,
    interactive: bool,
    transcript: Path,
    pace_s: float,
    save_to: NewFile,
    scenario: str | None = None,
) -> int:
    load_scenario(scenario or DEMO_SCENARIO)  # an unknown name is a ScenarioError before the banner
    try:
        loaded = read_session_file(transcript)
    except NotATranscript as exc:
        console.print(f"the demo transcript: {exc}", markup=False)
        return EXIT_FAILED
    view = ChatView(console)
    recorded = RecordedApprover(loaded.events)
    yours: StopsAtDeparture | None = None
    if interactive:
        approvals: PromptSession[str] = PromptSession()

        async def ask(question: str) -> str:
            return await view.ask(approvals, question)

        def factory(rules: RuleSet) -> Approver:
            nonlocal yours
            yours = StopsAtDeparture(TerminalApprover(console, ask, rules))
            return yours
    else:

        def factory(rules: RuleSet) -> Approver:
            return VisibleApprover(console, recorded, pause_s=min(pace_s * 30, 0.5))

    console.print(
        Text.assemble(
            ("Scout demo", "bold"),
            " · a simulated pair of DGX Sparks, from zero (the worker only through the head) · "
            "the model's turns replayed from a recording, every tool call live against the "
            "simulator\n",
        )
    )
    for event in loaded.events:
        if event.type == "user_message":
            console.print(Text.assemble(("you › ", "bold cyan"), event.text))
            break
    work = redrive(
        loaded.events,
        scenario or DEMO_SCENARIO,
        listeners=[view],
        approver_factory=factory,
        answers=recorded,
        pace_s=pace_s,
        transcript_path=save_to,
        stop_on_drift=interactive,
    )
    try:
        result = await until_interrupted(work, on_repeat=lambda: _still_stopping(console))
    except Interrupted:
        view.settle()
        console.print(
            Text(
                "Stopped (Ctrl-C): the running calls were cancelled and the simulated cluster "
                "was shut down with everything it ran.",
                style="yellow",
            )
        )
        console.print(f"transcript saved in {save_to.folder}", soft_wrap=True)
        return EXIT_INTERRUPTED
    view.settle()
    departure = yours.departure if yours is not None else None
    return _summary(console, result, departure)


def _still_stopping(console: Console) -> None:
    console.print(Text("still stopping the simulated cluster…", style="dim"))


def _summary(
    console: Console,
    result: RedriveResult,
    departure: tuple[ApprovalRequest, Decision] | None,
) -> int:
    console.rule("summary")
    if departure is not None:
        console.print(Text(departure_story(*departure), style="yellow"))
        console.print(f"transcript saved: {result.transcript_path}", soft_wrap=True)
        return EXIT_STOPPED
    check = result.endpoint_check()
    if check is not None:
        print_report(console, check.text, style="bold green")  # the proof, as the model read it
    else:
        console.print(Text("no endpoint was verified in this run", style="yellow"))
    if not result.report.clean:
        console.print(Text(result.report.describe(), style="yellow"))
    console.print(f"transcript saved: {result.transcript_path}", soft_wrap=True)
    return EXIT_VERIFIED if check is not None and result.report.clean else EXIT_FAILED


async def live_demo(console: Console, settings: Settings, save_to: NewFile) -> int:
    from agent.faces.chat import chat_on_runtime
    from agent.runtime.builder import model_client_for

    client = model_client_for(settings)
    view = ChatView(console)
    prompt: PromptSession[str] = PromptSession()

    async def ask(question: str) -> str:
        return await view.ask(prompt, question)

    async with sim_runtime(
        DEMO_SCENARIO,
        client=client,
        approver_factory=lambda rules: TerminalApprover(console, ask, rules),
        model=settings.model,
        goal=DEMO_GOAL,
        listeners=[view],
        transcript_path=save_to,
    ) as runtime:
        code = await chat_on_runtime(runtime, view, console, first_message=DEMO_GOAL)
    await client.close()
    return code
