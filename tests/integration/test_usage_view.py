"""What `/cost` and the closing line show: per-turn usage, its source, and what compaction saved."""

from types import SimpleNamespace

from rich.console import Console

from agent.faces.chat import COMMANDS
from agent.faces.render import EventRenderer
from agent.loop.compaction import CompactionPolicy
from agent.loop.transcript import read_transcript
from agent.standin.server import MessagesAPIServer
from tests.integration.test_compaction import RunTool, run_turn
from tests.support.session_kit import make_session, text_turn

POLICY = CompactionPolicy(enabled=True, keep_turns=1, min_chars=1_000, chunk_chars=3_000)


async def _session(tmp_path, script):
    with MessagesAPIServer(script) as server:
        session = make_session(server.url, [RunTool()], tmp_path, compaction=POLICY)
        await session.send("Check spark-a four times.")
        session.end("done")
    return session


async def test_cost_shows_each_turn_its_estimate_and_what_compaction_saved(tmp_path):
    script = [run_turn(f"toolu_{n}") for n in range(1, 5)] + [text_turn("Checked.")]
    session = await _session(tmp_path, script)
    console = Console(record=True, width=120)
    COMMANDS["/cost"](SimpleNamespace(session=session), console, "")
    shown = console.export_text()
    rows = [line.split() for line in shown.splitlines() if line.strip()[:1].isdigit()]
    assert [row[0] for row in rows] == ["1", "2", "3", "4", "5"]
    first = session.usage.per_turn[0]
    assert rows[0][1:5] == [
        str(first.input_tokens),
        str(first.cache_read_input_tokens),
        str(first.cache_creation_input_tokens),
        str(first.output_tokens),
    ]
    assert all(row[-1] == "estimate" for row in rows)
    assert "counted from the requests Scout built (an estimate); no API billed" in shown
    done = session.usage.compacted
    assert done.results >= 2
    assert f"compaction: {done.results} old results in {done.compactions} chunk(s)" in shown


async def test_the_closing_line_marks_estimates_and_claims_no_cost(tmp_path):
    session = await _session(tmp_path, [run_turn("toolu_1"), text_turn("Checked.")])
    assert session.usage.cost_usd == 0
    end = read_transcript(tmp_path / "session.jsonl").events[-1]
    console = Console(record=True, width=200)
    EventRenderer(console).render(end)
    line = console.export_text().strip()
    assert line.startswith("session ended: done · 2 model turns · input ~")
    assert line.endswith("estimated from the requests, no API billed")
    assert "$" not in line


async def test_usage_the_api_reports_is_shown_with_its_cost(tmp_path):
    reported = text_turn("Checked.", input_tokens=1_000, output_tokens=200)
    session = await _session(tmp_path, [reported])
    assert session.usage.source == "api" and session.usage.cost_usd > 0
    end = read_transcript(tmp_path / "session.jsonl").events[-1]
    console = Console(record=True, width=200)
    EventRenderer(console).render(end)
    assert console.export_text().strip().endswith(f"≈${session.usage.cost_usd:.2f}")
