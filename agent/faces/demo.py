"""`scout demo`: the whole story on a simulated two-Spark cluster, no API key, no network.

The recorded session's model turns are replayed through the chat face while every tool runs live
against a fresh simulated cluster; approvals are answered visibly as recorded (or by you, with
`--interactive`). `--live` lets a real model drive the same simulated cluster instead.
"""

from __future__ import annotations

import asyncio
from pathlib import Path

from prompt_toolkit import PromptSession
from rich.console import Console
from rich.text import Text

from agent.faces.chat_view import ChatView
from agent.loop.transcript import read_transcript
from agent.replay.recorded_approvals import RecordedApprover
from agent.replay.redrive import redrive, sim_runtime
from agent.runtime.settings import Settings
from agent.safety.approvals import ApprovalRequest, Approver, Decision
from agent.safety.approvers.terminal import TerminalApprover

DEMO_TRANSCRIPT = Path(__file__).resolve().parents[2] / "transcripts" / "seed-pair-deploy.jsonl"
DEMO_SCENARIO = "seed-pair"
DEMO_GOAL = (
    "Serve Qwen/Qwen3.5-122B-A10B-FP8 with tensor parallelism 2 across spark-a and spark-b, "
    "then prove it works and how fast it is."
)


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


async def replay_demo(
    console: Console, *, interactive: bool, transcript: Path, pace_s: float, save_to: Path
) -> int:
    loaded = read_transcript(transcript)
    if not loaded.events:
        console.print(f"the demo transcript {transcript} holds no readable events")
        return 1
    view = ChatView(console)
    recorded = RecordedApprover(loaded.events)
    if interactive:
        approvals: PromptSession[str] = PromptSession()

        async def ask(question: str) -> str:
            view.pause()
            return await approvals.prompt_async(question)

        def factory(gate):  # type: ignore[no-untyped-def]
            return TerminalApprover(console, ask, gate.allow_for_session)
    else:

        def factory(gate):  # type: ignore[no-untyped-def]
            return VisibleApprover(console, recorded, pause_s=min(pace_s * 30, 0.5))

    console.print(
        Text.assemble(
            ("Scout demo", "bold"),
            " · a simulated pair of DGX Sparks (the worker only through the head) · the model's "
            "turns replayed from a recording, every tool call live against the simulator\n",
        )
    )
    for event in loaded.events:
        if event.type == "user_message":
            console.print(Text.assemble(("you › ", "bold cyan"), event.text))
            break
    result = await redrive(
        loaded.events,
        DEMO_SCENARIO,
        listeners=[view],
        approver_factory=factory,
        answers=recorded,
        pace_s=pace_s,
        transcript_path=save_to,
    )
    view.settle()
    console.rule("summary")
    check = result.endpoint_check()
    if check is not None:
        console.print(Text(check.text.strip().splitlines()[-1], style="bold green"), soft_wrap=True)
    else:
        console.print(Text("no endpoint was verified in this run", style="yellow"))
    if not result.report.clean:
        console.print(Text(result.report.describe(), style="yellow"))
    console.print(f"transcript saved: {result.transcript_path}", soft_wrap=True)
    return 0 if check is not None and result.report.clean else 1


async def live_demo(console: Console, settings: Settings, save_to: Path) -> int:
    from agent.faces.chat import chat_on_runtime
    from agent.runtime.builder import model_client_for

    client = model_client_for(settings)
    view = ChatView(console)
    prompt: PromptSession[str] = PromptSession()

    async def ask(question: str) -> str:
        view.pause()
        return await prompt.prompt_async(question)

    async with sim_runtime(
        DEMO_SCENARIO,
        client=client,
        approver_factory=lambda gate: TerminalApprover(console, ask, gate.allow_for_session),
        model=settings.model,
        goal=DEMO_GOAL,
        listeners=[view],
        transcript_path=save_to,
    ) as runtime:
        code = await chat_on_runtime(runtime, view, console, first_message=DEMO_GOAL)
    await client.close()
    return code
