"""The webhook approver over real HTTP on 127.0.0.1: the example receiver, and scripted receivers.

Scripted receivers misbehave on purpose (wrong secret, stale clock, another step's fingerprint,
answers that never come) to show that only a verified answer for this very step is ever taken as
a decision, and that every failure denies with a message saying why.
"""

from __future__ import annotations

import asyncio
import io
import json
import os
import socket
import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest
from structlog.testing import capture_logs

from agent.safety.approvers.webhook import WebhookApprover
from tests.support.example_receiver import receiver, serving
from tests.support.loop_clock import movable_clock
from tests.support.webhook_kit import (
    SECRET,
    Reply,
    ScriptedReceiver,
    Seen,
    answer_for,
    make_request,
    signed,
)

ROOT = Path(__file__).resolve().parents[2]
RULES = """
approve:
  - {tool: ssh_exec, risk: read_only}
deny:
  - {risk: destructive, message: "no destructive steps from CI"}
"""


@pytest.fixture
def rules_file(tmp_path: Path) -> Path:
    path = tmp_path / "rules.yaml"
    path.write_text(RULES)
    return path


def example_server(decide, secret: str = SECRET, *, async_mode: bool = False):
    return receiver.make_server(
        "127.0.0.1", 0, secret.encode(), decide, async_mode=async_mode, log=io.StringIO()
    )


# --- the example receiver: rules, terminal, callback mode -------------------------------------


async def test_rules_receiver_approves_a_read_only_step(rules_file):
    request = make_request()
    with serving(example_server(receiver.RulesDecider.from_file(rules_file))) as url:
        async with WebhookApprover(url, SECRET) as approver:
            decision = await approver.decide(request)

    assert decision.kind == "approved" and decision.allows
    assert decision.fingerprint == request.fingerprint
    assert decision.decided_by == str(rules_file)


async def test_rules_receiver_denies_with_its_message_and_by_default(rules_file):
    destructive = make_request("docker_ctl", {"action": "rm", "name": "vllm_node"}, "destructive")
    unlisted = make_request("docker_ctl", {"action": "run", "name": "ray"}, "mutating")
    with serving(example_server(receiver.RulesDecider.from_file(rules_file))) as url:
        async with WebhookApprover(url, SECRET) as approver:
            denied = await approver.decide(destructive)
            default = await approver.decide(unlisted)

    assert denied.kind == "denied" and not denied.allows
    assert denied.message == "no destructive steps from CI"
    assert default.kind == "denied"
    assert default.message == "no rule approves this step (default deny)"


async def test_terminal_receiver_edit_returns_the_edited_input():
    answers = iter(["e", "{not json", "e", '{"host": "spark-head", "command": "nvidia-smi -L"}'])
    screen = io.StringIO()
    terminal = receiver.TerminalDecider(ask=lambda _prompt: next(answers), out=screen)
    request = make_request()
    with serving(example_server(terminal)) as url:
        async with WebhookApprover(url, SECRET) as approver:
            decision = await approver.decide(request)

    assert decision.kind == "approved_with_edit" and decision.allows
    assert decision.edited_input == {"host": "spark-head", "command": "nvidia-smi -L"}
    assert decision.fingerprint == request.fingerprint
    shown = screen.getvalue()
    assert "ssh_exec on spark-head" in shown and "ssh_exec is read_only" in shown
    assert "not JSON" in shown


async def test_terminal_receiver_deny_carries_the_operators_words():
    terminal = receiver.TerminalDecider(
        ask=lambda _prompt: "n wait for the change window", out=io.StringIO()
    )
    with serving(example_server(terminal)) as url:
        async with WebhookApprover(url, SECRET) as approver:
            decision = await approver.decide(make_request())

    assert decision.kind == "denied"
    assert decision.message == "wait for the change window"


async def test_callback_path_with_the_async_example_receiver(rules_file):
    decider = receiver.RulesDecider.from_file(rules_file)
    with serving(example_server(decider, async_mode=True)) as url:
        async with WebhookApprover(url, SECRET, timeout_s=30) as approver:
            decision = await approver.decide(make_request())

    assert decision.kind == "approved"
    assert decision.decided_by == str(rules_file)


async def test_receiver_rejects_a_request_signed_with_another_secret(rules_file):
    decider = receiver.RulesDecider.from_file(rules_file)
    with serving(example_server(decider, secret="the-receivers-own-secret")) as url:
        async with WebhookApprover(url, SECRET) as approver:
            decision = await approver.decide(make_request())

    assert decision.kind == "unavailable" and not decision.allows
    assert "refused the request (HTTP 401" in decision.message
    assert "bad signature" in decision.message
    assert decision.message.endswith("denied — nothing runs without an approval")


def test_example_cli_explains_a_missing_secret(rules_file):
    env = {k: v for k, v in os.environ.items() if k != "SCOUT_WEBHOOK_SECRET"}
    done = subprocess.run(
        [sys.executable, "examples/approval_receiver.py", "--port", "0", "--rules", rules_file],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=30,
    )
    assert done.returncode == 2
    assert "$SCOUT_WEBHOOK_SECRET is empty" in done.stderr
    assert "Traceback" not in done.stderr


async def test_example_cli_serves_decisions(rules_file):
    env = {**os.environ, "CI_APPROVAL_SECRET": SECRET}
    command = ["examples/approval_receiver.py", "--port", "0", "--secret-env", "CI_APPROVAL_SECRET"]
    process = subprocess.Popen(
        [sys.executable, *command, "--rules", str(rules_file)],
        cwd=ROOT,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
    )
    try:
        banner = await asyncio.to_thread(process.stdout.readline)
        assert banner.startswith("listening on http://127.0.0.1:")
        url = banner.split()[2]
        async with WebhookApprover(url, SECRET) as approver:
            decision = await approver.decide(make_request())
    finally:
        process.terminate()
        process.wait(timeout=10)
        process.stdout.close()

    assert decision.kind == "approved"


# --- what Scout sends ---------------------------------------------------------------------------


async def test_request_is_signed_and_carries_the_step():
    request = make_request()
    script = ScriptedReceiver(lambda seen: (200, signed(answer_for(request)), answer_for(request)))
    with serving(script.server()) as url:
        async with WebhookApprover(url, SECRET, timeout_s=60) as approver:
            await approver.decide(request)
            callback_url = approver.callback_url(request.id)

    sent = script.seen[0]
    assert receiver.SignatureCheck(SECRET.encode()).problem(sent.headers, sent.body) is None
    assert sent.headers["X-Scout-Delivery"] == request.id
    payload = script.payload()
    assert payload["type"] == "approval_request"
    assert payload["callback_url"] == callback_url
    assert {k: payload[k] for k in ("id", "fingerprint", "tool", "input", "hosts", "risk")} == {
        "id": request.id,
        "fingerprint": request.fingerprint,
        "tool": "ssh_exec",
        "input": request.input,
        "hosts": ["spark-head"],
        "risk": "read_only",
    }
    assert payload["expires_at"]


# --- answers in the response body that must not count --------------------------------------------


async def test_response_signed_with_the_wrong_secret_is_not_a_decision():
    request = make_request()
    body = answer_for(request)
    script = ScriptedReceiver(lambda _seen: (200, signed(body, secret="guessed"), body))
    with serving(script.server()) as url:
        async with WebhookApprover(url, SECRET) as approver:
            decision = await approver.decide(request)

    assert decision.kind == "unavailable" and not decision.allows
    assert "answer rejected (bad signature" in decision.message


async def test_response_with_a_stale_timestamp_is_rejected():
    request = make_request()
    body = answer_for(request)
    script = ScriptedReceiver(lambda _seen: (200, signed(body, at=time.time() - 900), body))
    with serving(script.server()) as url:
        async with WebhookApprover(url, SECRET) as approver:
            decision = await approver.decide(request)

    assert decision.kind == "unavailable"
    assert "stale timestamp" in decision.message


async def test_response_for_another_step_is_rejected():
    request = make_request()
    other = make_request(tool_input={"host": "spark-head", "command": "reboot"})
    body = answer_for(other)
    script = ScriptedReceiver(lambda _seen: (200, signed(body), body))
    with serving(script.server()) as url:
        async with WebhookApprover(url, SECRET) as approver:
            decision = await approver.decide(request)

    assert decision.kind == "unavailable" and not decision.allows
    assert "fingerprint mismatch" in decision.message


# --- no answer at all -------------------------------------------------------------------------


async def test_receiver_that_never_answers_times_out_as_denied():
    def hang(_seen: Seen) -> Reply:
        script.release.wait(30)
        return 500, {}, b""

    script = ScriptedReceiver(hang)
    with serving(script.server()) as url:
        try:
            async with WebhookApprover(url, SECRET, timeout_s=0.3) as approver:
                decision = await approver.decide(make_request())
        finally:
            script.release.set()

    assert decision.kind == "timed_out" and not decision.allows
    assert decision.message == "no decision from the webhook within 0.3 s; denied"


async def test_nothing_listening_is_unavailable(closed_port: int):
    port = closed_port
    async with WebhookApprover(f"http://127.0.0.1:{port}/hook", SECRET) as approver:
        decision = await approver.decide(make_request())

    assert decision.kind == "unavailable" and not decision.allows
    assert decision.message.startswith(
        f"approval webhook unreachable (cannot connect to 127.0.0.1:{port}"
    )
    assert decision.message.endswith("; denied — nothing runs without an approval")


async def test_unreachable_message_hides_tokens_in_the_url(closed_port: int):
    port = closed_port
    url = f"http://ci:tok3n-in-userinfo@127.0.0.1:{port}/hooks/tok3n-in-path?key=tok3n-in-query"
    async with WebhookApprover(url, SECRET) as approver:
        decision = await approver.decide(make_request())
        shown = repr(approver)

    assert decision.kind == "unavailable"
    assert f"127.0.0.1:{port}" in decision.message and f"127.0.0.1:{port}" in shown
    assert "tok3n" not in decision.message + shown


async def test_callback_port_in_use_is_unavailable_not_a_crash():
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        approver = WebhookApprover("http://127.0.0.1:9/hook", SECRET, callback_port=port)
        try:
            decision = await approver.decide(make_request())
        finally:
            await approver.close()

    assert decision.kind == "unavailable"
    assert decision.message.startswith("cannot open the approval callback listener (")
    assert decision.message.endswith("denied — nothing runs without an approval")


async def test_server_error_is_unavailable():
    script = ScriptedReceiver(lambda _seen: (503, {}, b"maintenance"))
    with serving(script.server()) as url:
        async with WebhookApprover(url, SECRET) as approver:
            decision = await approver.decide(make_request())

    assert decision.kind == "unavailable"
    assert decision.message.startswith("approval webhook unreachable (HTTP 503)")


# --- deferred answers: callback and polling ------------------------------------------------------


async def test_callback_listener_rejects_bad_callbacks_then_takes_a_good_one():
    request = make_request()
    script = ScriptedReceiver(lambda _seen: (202, {}, b""))
    with serving(script.server()) as url:
        async with WebhookApprover(url, SECRET, timeout_s=30) as approver:
            pending = asyncio.create_task(approver.decide(request))
            await script.wait_for_request(1)
            callback_url = script.payload()["callback_url"]
            good = answer_for(request, "denied", message="not during business hours")
            wrong_step = answer_for(make_request(tool_input={"command": "reboot"}))
            async with httpx.AsyncClient(trust_env=False) as client:
                unsigned = await client.post(callback_url, content=good)
                forged = await client.post(callback_url, content=good, headers=signed(good, "x"))
                stale = await client.post(
                    callback_url, content=good, headers=signed(good, at=time.time() - 600)
                )
                mismatch = await client.post(
                    callback_url, content=wrong_step, headers=signed(wrong_step)
                )
                other = answer_for(request, "approved")
                unknown = await client.post(
                    callback_url.replace(request.id, "toolu_unknown"),
                    content=other,
                    headers=signed(other),
                )
                accepted = await client.post(callback_url, content=good, headers=signed(good))
            decision = await pending

    assert [r.status_code for r in (unsigned, forged, stale, mismatch, unknown, accepted)] == [
        401,
        401,
        401,
        422,
        404,
        204,
    ]
    assert "stale timestamp" in stale.text and "fingerprint mismatch" in mismatch.text
    assert decision.kind == "denied"
    assert decision.message == "not during business hours"


async def test_replayed_callback_is_rejected_and_does_not_count():
    request = make_request()
    script = ScriptedReceiver(lambda _seen: (202, {}, b""))
    approval = answer_for(request, "approved")
    with serving(script.server()) as url:
        async with (
            WebhookApprover(url, SECRET, timeout_s=30) as approver,
            httpx.AsyncClient(trust_env=False) as client,
        ):
            first = asyncio.create_task(approver.decide(request))
            await script.wait_for_request(1)
            callback_url = script.payload()["callback_url"]
            captured = signed(approval)
            delivered = await client.post(callback_url, content=approval, headers=captured)
            first_decision = await first

            # the same step is asked again; someone replays the captured approval
            second = asyncio.create_task(approver.decide(request))
            await script.wait_for_request(2)
            replayed = await client.post(callback_url, content=approval, headers=captured)
            denial = answer_for(request, "denied", message="second time: no")
            fresh = await client.post(callback_url, content=denial, headers=signed(denial))
            second_decision = await second

    assert delivered.status_code == 204 and first_decision.kind == "approved"
    assert replayed.status_code == 409 and "replayed" in replayed.text
    assert fresh.status_code == 204
    assert second_decision.kind == "denied"
    assert second_decision.message == "second time: no"


async def test_polling_path_skips_not_yet_and_forged_answers():
    request = make_request()
    approval, denial = answer_for(request, "approved"), answer_for(request, "denied", message="no")
    polls: list[Seen] = []

    def respond(seen: Seen) -> Reply:
        if seen.method == "POST":
            later = json.dumps({"decision_url": f"/decisions/{request.id}"}).encode()
            return 202, signed(later), later
        polls.append(seen)
        if len(polls) == 1:
            return 204, {}, b""
        if len(polls) == 2:
            return 200, signed(approval, secret="forged"), approval
        return 200, signed(denial), denial

    script = ScriptedReceiver(respond)
    with serving(script.server()) as url:
        async with WebhookApprover(url, SECRET, timeout_s=30, poll_interval_s=0.01) as approver:
            decision = await approver.decide(request)

    assert decision.kind == "denied" and decision.message == "no"
    assert len(polls) == 3
    assert {poll.path for poll in polls} == {f"/decisions/{request.id}"}
    for poll in polls:  # each poll is signed; GETs repeat, so check each with a fresh checker
        assert receiver.SignatureCheck(SECRET.encode()).problem(poll.headers, b"") is None


async def test_timeout_names_the_answer_it_rejected_while_waiting():
    request = make_request()
    approval = answer_for(request)
    script = ScriptedReceiver(lambda _seen: (202, {}, b""))
    with serving(script.server()) as url, movable_clock() as forward:
        async with WebhookApprover(url, SECRET, timeout_s=300) as approver:
            pending = asyncio.create_task(approver.decide(request))
            await script.wait_for_request(1)
            async with httpx.AsyncClient(trust_env=False) as client:
                forged = await client.post(
                    script.payload()["callback_url"],
                    content=approval,
                    headers=signed(approval, secret="forged"),
                )
            forward(300)  # the timeout comes once the forged answer was rejected, however slowly
            decision = await pending

    assert forged.status_code == 401
    assert decision.kind == "timed_out" and not decision.allows
    assert decision.message == (
        "no decision from the webhook within 300 s; denied "
        "(rejected while waiting: bad signature (wrong secret or altered body))"
    )


# --- the secret stays secret -----------------------------------------------------------------


async def test_secret_never_reaches_logs_reprs_or_messages():
    request = make_request()
    body = answer_for(request)
    script = ScriptedReceiver(lambda _seen: (200, signed(body, secret="guessed"), body))
    with capture_logs() as logs, serving(script.server()) as url:
        async with WebhookApprover(url, SECRET) as approver:
            decision = await approver.decide(request)
            shown = repr(approver)

    assert any(entry["event"] == "approval answer rejected" for entry in logs)
    for text in (str(logs), shown, decision.model_dump_json()):
        assert SECRET not in text


def test_empty_or_short_secret_is_refused_with_advice():
    with pytest.raises(ValueError, match="secret is empty; use a random secret of at least 32"):
        WebhookApprover("http://127.0.0.1:9/hook", "")
    with pytest.raises(ValueError, match=r"secret is only 1 characters; .*openssl rand -hex 32"):
        WebhookApprover("http://127.0.0.1:9/hook", "x")
