"""Headless runs (`scout run`): events as JSON lines on stdout, approvals by webhook or none (ci).

Exit status: 0 when the goal's turn ended normally, 2 when it was stopped by a denial, a budget or
another stop the operator must look at, 1 on an error.
"""

from __future__ import annotations

import sys
from typing import TextIO

from agent.daytwo.status import deployment_reader
from agent.faces.failures import describe_os_error
from agent.loop.events import ApprovalDecisionEvent, Event
from agent.loop.recorder import SessionListener
from agent.loop.resumed import RebuiltSession
from agent.loop.session import TurnOutcome
from agent.runtime.builder import model_client_for, open_runtime
from agent.runtime.settings import Settings
from agent.safety.approvers.webhook import WebhookApprover, insecure_http_problem
from tools.ssh import SSHError

EXIT_DONE, EXIT_ERROR, EXIT_STOPPED = 0, 1, 2
CARRY_ON = "Carry on with the goal of this session from where it stopped."


class JsonLinesListener(SessionListener):
    """Writes every event, as the transcript holds it (redacted), to a stream."""

    def __init__(self, out: TextIO | None = None) -> None:
        self.out = out or sys.stdout
        self.denials = 0

    def on_event(self, event: Event) -> None:
        if isinstance(event, ApprovalDecisionEvent) and event.decision not in {
            "approved",
            "approved_with_edit",
        }:
            self.denials += 1
        self.out.write(event.model_dump_json() + "\n")
        self.out.flush()


def exit_status(outcome: TurnOutcome, denials: int) -> int:
    if outcome.stop == "error":
        return EXIT_ERROR
    if outcome.stop != "end_turn" or denials:
        return EXIT_STOPPED
    return EXIT_DONE


async def run_goal(
    settings: Settings,
    goal: str | None,
    *,
    approvals: str,
    webhook_url: str | None,
    webhook_secret: str | None,
    out: TextIO | None = None,
    err: TextIO | None = None,
    resume: RebuiltSession | None = None,
) -> int:
    """Run one goal to the end of its turn without a human at the terminal; with `resume`,
    continue that session (its jobs found again first), the goal optional."""
    err = err or sys.stderr
    if not settings.can_reach_model:
        err.write("scout run: no API key; set ANTHROPIC_API_KEY (or SCOUT_API_KEY).\n")
        return EXIT_ERROR
    approver = None
    if approvals == "webhook":
        if not webhook_url or not webhook_secret:
            err.write(
                "scout run: --approvals webhook needs --webhook-url and a secret in the "
                f"variable named by --webhook-secret-env ({settings.webhook_secret_env})\n"
            )
            return EXIT_ERROR
        allow_http = settings.webhook_allow_insecure_http
        try:
            approver = WebhookApprover(
                webhook_url,
                webhook_secret,
                timeout_s=settings.approval_timeout_s,
                allow_insecure_http=allow_http,
            )
            await approver.start()
        except (ValueError, OSError) as exc:
            hint = "; pass --webhook-allow-http to accept that" if "plain http" in str(exc) else ""
            err.write(f"scout run: cannot set up the approval webhook: {exc}{hint}\n")
            return EXIT_ERROR
        insecure = insecure_http_problem(webhook_url)
        if insecure:
            err.write(f"scout run: warning: {insecure}\n")
    else:
        settings = settings.model_copy(update={"mode": "ci"})
    client = model_client_for(settings)
    listener = JsonLinesListener(out)
    redactor = settings.redactor()
    if webhook_secret:
        redactor.add_secret(webhook_secret)
    try:
        runtime = await open_runtime(
            settings,
            client=client,
            approver_factory=lambda rules: approver,
            goal=goal,
            redactor=redactor,
            listeners=[listener],
            resume=resume,
            deployments=deployment_reader(settings.deployments_dir),
        )
    except (SSHError, OSError, ValueError) as exc:
        said = describe_os_error(exc) if isinstance(exc, OSError) else str(exc)
        err.write(f"scout run: {said}\n")
        await client.close()
        if approver is not None:
            await approver.close()
        return EXIT_ERROR
    try:
        outcome = await runtime.session.send(runtime.with_resume_note(goal or CARRY_ON))
        runtime.session.end(outcome.stop, outcome.message)
    finally:
        if approver is not None:
            await approver.close()
        await runtime.aclose()
        await client.close()
    # the message's own sentence, less its full stop: the line goes on after it
    why = f": {' '.join(outcome.message.split()).rstrip('.')}" if outcome.stop == "error" else ""
    err.write(f"scout run: {outcome.stop}{why}; transcript: {runtime.transcript_path}\n")
    return exit_status(outcome, listener.denials)
