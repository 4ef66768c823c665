from agent.loop.events import (
    ApprovalRequestEvent,
    ModelResponse,
    Notice,
    SessionStart,
    ToolCallEvent,
    ToolResultEvent,
    UserMessage,
)
from agent.loop.transcript import MAX_LINE_BYTES, TranscriptWriter, read_transcript
from agent.safety.redact import Redactor

FAKE_KEY = "sk-ant-api03-" + "Z" * 48


def _write_sample(path, redactor=None):
    writer = TranscriptWriter(path, "s1", redactor or Redactor())
    written = [
        writer.write(SessionStart(model="claude-test", tools=["ssh_exec"])),
        writer.write(UserMessage(text="deploy qwen")),
        writer.write(
            ModelResponse(
                turn=1,
                content=[{"type": "tool_use", "id": "t1", "name": "ssh_exec", "input": {}}],
                stop_reason="tool_use",
                usage={"input_tokens": 5, "output_tokens": 3},
            )
        ),
        writer.write(ToolCallEvent(id="t1", name="ssh_exec", input={"command": "env"})),
        writer.write(ToolResultEvent(id="t1", name="ssh_exec", text=f"KEY={FAKE_KEY}\nok")),
        writer.write(Notice(message="done")),
    ]
    writer.close()
    return written


def test_round_trip_is_equal(tmp_path):
    path = tmp_path / "t.jsonl"
    written = _write_sample(path)
    loaded = read_transcript(path)
    assert loaded.problems == []
    assert loaded.events == written
    assert [e.seq for e in loaded.events] == [1, 2, 3, 4, 5, 6]
    assert all(e.session == "s1" and e.v == 1 and e.ts.endswith("Z") for e in loaded.events)


def test_a_key_inside_a_tool_result_never_reaches_the_file(tmp_path):
    path = tmp_path / "t.jsonl"
    _write_sample(path)
    raw = path.read_text()
    assert FAKE_KEY not in raw
    assert "KEY=[REDACTED]" in raw


def test_known_secret_values_are_masked_whatever_their_shape(tmp_path):
    path = tmp_path / "t.jsonl"
    writer = TranscriptWriter(path, "s1", Redactor(["plain-webhook-secret"]))
    writer.write(UserMessage(text="the secret is plain-webhook-secret"))
    writer.close()
    assert "plain-webhook-secret" not in path.read_text()


def test_truncated_last_line_is_reported_and_the_rest_kept(tmp_path):
    path = tmp_path / "t.jsonl"
    _write_sample(path)
    text = path.read_text()
    path.write_text(text[: len(text) - 25])  # cut inside the last line
    loaded = read_transcript(path)
    assert len(loaded.events) == 5
    assert len(loaded.problems) == 1 and "last line is incomplete" in loaded.problems[0]


def test_a_broken_middle_line_is_skipped_with_its_line_number(tmp_path):
    path = tmp_path / "t.jsonl"
    _write_sample(path)
    lines = path.read_text().splitlines()
    lines[2] = '{"type": "model_response", "v": 1}'
    path.write_text("\n".join(lines) + "\n")
    loaded = read_transcript(path)
    assert len(loaded.events) == 5
    assert loaded.problems[0].startswith("line 3: not a valid event")


def test_a_middle_line_that_is_not_json_says_so_plainly(tmp_path):
    path = tmp_path / "t.jsonl"
    _write_sample(path)
    lines = path.read_text().splitlines()
    lines[1] = '{"type": "user_message", "te'
    path.write_text("\n".join(lines) + "\n")
    loaded = read_transcript(path)
    assert len(loaded.events) == 5
    (problem,) = loaded.problems
    assert problem.startswith("line 2: not a valid event (Invalid JSON: ")
    assert problem.endswith("); skipped") and "(:" not in problem


def test_redactor_patterns():
    redactor = Redactor()
    samples = {
        "Authorization: Bearer abc.def.ghijklmnop": "abc.def.ghijklmnop",
        "HF_TOKEN=hf_abcdefghijklmnopqrstuvwx": "hf_abcdefghijklmnopqrstuvwx",
        "git clone https://bob:hunter2pass@github.com/x": "hunter2pass",
        "-----BEGIN OPENSSH PRIVATE KEY-----\nb3Bl\n-----END OPENSSH PRIVATE KEY-----": "b3Bl",
        "db password=s3cretpw here": "s3cretpw",
    }
    for text, secret in samples.items():
        assert secret not in redactor.text(text), text
    assert redactor.text("nvidia-smi shows 580.95.05") == "nvidia-smi shows 580.95.05"


def test_an_oversized_line_is_skipped_unread_and_reported(tmp_path):
    import tracemalloc

    path = tmp_path / "huge.jsonl"
    with path.open("w", encoding="utf-8") as handle:
        handle.write(UserMessage(text="before").model_dump_json() + "\n")
        handle.write('{"type":"user_message","text":"' + "A" * 60_000_000 + '"}\n')
        handle.write(
            UserMessage(text="after \u2028 with a line separator").model_dump_json() + "\n"
        )
    tracemalloc.start()
    try:
        loaded = read_transcript(path)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert [e.text for e in loaded.events] == ["before", "after \u2028 with a line separator"]
    assert loaded.problems == [
        "line 2: 57.2 MB, longer than the 4 MB a transcript line may hold; skipped without "
        "reading it"
    ]
    assert peak < 20 * 1024 * 1024  # about two 4 MB buffers, never the whole 60 MB line


def test_redaction_stays_linear_on_hostile_text():
    """Patterns that retried every split of a long word took seconds per 20 KB of page text
    (run on the event loop for every transcript line)."""
    redactor = Redactor()
    hostile = ["a" * 300_000, "password" * 40_000, "a+" * 150_000, "token_" * 50_000]
    for text in hostile:  # quadratic patterns took minutes here (past the test timeout)
        assert redactor.text(text) == text
    assert redactor.text("DB_PASSWORD=hunter22 https://u:pw@h.example/x token: 'abcd1234'") == (
        "DB_PASSWORD=[REDACTED] https://u:[REDACTED]@h.example/x token: '[REDACTED]'"
    )


def test_no_event_is_written_longer_than_the_reader_takes(tmp_path):
    # what the model alone could make too long, beyond the reply itself (agent/loop/reply_bound)
    escaped = "\x01" * (MAX_LINE_BYTES // 4)  # six bytes each once escaped
    # no one value worth cutting: the keys make the line long, each value is a byte or four
    many = {f"k{n}".ljust(1000, "."): n for n in range(MAX_LINE_BYTES // 900)}
    path = tmp_path / "t.jsonl"
    writer = TranscriptWriter(path, "s1", Redactor())
    written = [
        writer.write(ToolCallEvent(id="t1", name="n", input={"goal": escaped}, summary=escaped)),
        writer.write(
            ApprovalRequestEvent(
                call_id="t1", fingerprint="f", tool="n", input={"x": escaped}, risk="r", reason="?"
            )
        ),
        writer.write(ToolResultEvent(id="t1", name="n", text="ok", data=many)),
        writer.write(Notice(message="small")),
    ]
    writer.close()
    loaded = read_transcript(path)
    assert loaded.problems == []
    assert loaded.events == written
    assert all(len(line) < MAX_LINE_BYTES for line in path.read_bytes().splitlines())
    call, approval, result, notice = loaded.events
    assert call.summary.endswith("longer than a transcript line holds]")
    assert approval.input["x"].endswith("longer than a transcript line holds]")
    assert set(result.data) == {"omitted"}
    assert notice.message == "small"
