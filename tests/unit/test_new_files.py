"""Files of a session never collide: sessions started together each write their own transcript,
a proof's chart and JSON never overwrite another proof's, and nothing Scout creates is opened on
top of a file that exists."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from agent.loop.events import SessionStart, UserMessage
from agent.loop.transcript import TranscriptWriter, read_transcript
from agent.runtime.builder import new_transcript
from agent.runtime.settings import Settings
from agent.safety.redact import Redactor
from tools.deploy.proof.report import Report, write_files
from tools.text import new_files
from tools.text.new_files import NewFile, create_new


def test_sessions_started_together_each_write_a_transcript_of_their_own(tmp_path: Path) -> None:
    settings = Settings(transcripts_dir=tmp_path)
    writers = [TranscriptWriter(new_transcript(settings), f"s{n}", Redactor()) for n in range(6)]
    for n, writer in enumerate(writers):
        writer.write(SessionStart(model="claude-test"))
        writer.write(UserMessage(text=f"goal {n}"))
        writer.close()
    assert len({writer.path for writer in writers}) == 6
    for n, writer in enumerate(writers):
        events = read_transcript(writer.path).events
        assert writer.path.parent == tmp_path and writer.path.name.startswith("scout-")
        assert [e.session for e in events] == [f"s{n}", f"s{n}"]
        assert events[-1].text == f"goal {n}"


def test_a_transcript_is_never_written_into_a_file_that_exists(tmp_path: Path) -> None:
    theirs = tmp_path / "taken.jsonl"
    theirs.write_text("another session's line\n")
    with pytest.raises(FileExistsError):
        TranscriptWriter(theirs, "s1", Redactor())
    assert theirs.read_text() == "another session's line\n"


def test_two_proofs_of_one_endpoint_keep_both_charts_and_both_json_files(tmp_path: Path) -> None:
    first = Report("vllm bench serve", [], {}, "no GPU", None, {"model": "first"})
    second = Report("vllm bench serve", [], {}, "no GPU", None, {"model": "second"})
    files = [write_files(first, tmp_path, "proof-spark-a-8000")]
    files.append(write_files(second, tmp_path, "proof-spark-a-8000"))
    assert len({path for pair in files for path in pair}) == 4
    for (chart, data), model in zip(files, ("first", "second"), strict=True):
        assert chart.stem == data.stem and chart.suffix == ".html" and data.suffix == ".json"
        assert json.loads(data.read_text())["fingerprint"]["model"] == model
        assert model in chart.read_text()


def test_a_name_already_taken_is_passed_over_for_a_fresh_one(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The random token is the only thing fixed here: the first two draws are the same, so the
    second file meets the first one's name (within the same second) and must draw again."""
    draws = iter(["a" * 12, "a" * 12, "b" * 12])
    monkeypatch.setattr(new_files.secrets, "token_hex", lambda n: next(draws))
    path_one, one = create_new(NewFile(tmp_path, "scout", ".jsonl"))
    one.write("first\n")
    one.close()
    path_two, two = create_new(NewFile(tmp_path, "scout", ".jsonl"))
    two.write("second\n")
    two.close()
    assert path_one != path_two
    assert path_one.read_text() == "first\n" and path_two.read_text() == "second\n"
