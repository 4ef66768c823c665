"""One turn's results share a budget; the same answer from many hosts is shown once."""

from pathlib import Path

from agent.loop.batch_budget import shape_batch
from agent.loop.calls import ToolCall
from tools.base import ToolResult


def call(n: int, host: str, command: str = "cat /etc/os-release") -> ToolCall:
    return ToolCall(f"toolu_{n}", "ssh_exec", {"host": host, "command": command})


def answer(text: str, digest: str | None = None) -> ToolResult:
    return ToolResult(text=text, meta={"output_digest": digest} if digest else {})


def test_a_batch_within_its_budget_is_left_alone(tmp_path: Path):
    calls = [call(1, "a"), call(2, "b")]
    assert shape_batch(calls, [answer("x" * 100), answer("y" * 100)], 1_000, tmp_path) == {}


def test_the_same_answer_from_many_hosts_is_shown_once_naming_them(tmp_path: Path):
    calls = [call(n, f"node-{n}") for n in range(1, 5)]
    results = [answer("NAME=DGX OS\n" * 50, "same") for _ in range(3)]
    results.append(answer("NAME=Ubuntu\n", "other"))
    shaped = shape_batch(calls, results, 100_000, tmp_path)
    assert shaped["toolu_1"].endswith(
        "[the same output came from node-2, node-3 (toolu_2, toolu_3)]"
    )
    assert shaped["toolu_2"] == "[same output as toolu_1 on node-1; shown there once]"
    assert "toolu_4" not in shaped


def test_a_different_command_is_not_the_same_answer(tmp_path: Path):
    calls = [call(1, "a"), call(2, "b", command="cat /etc/hostname")]
    results = [answer("same text", "d"), answer("same text", "d")]
    assert shape_batch(calls, results, 100_000, tmp_path) == {}


def test_over_budget_the_largest_are_cut_to_one_size_and_small_ones_stay(tmp_path: Path):
    calls = [call(n, f"h{n}") for n in range(1, 5)]
    texts = ["small answer", "L" * 30_000, "M" * 20_000, "S" * 2_000]
    shaped = shape_batch(calls, [answer(t) for t in texts], 20_000, tmp_path)
    assert set(shaped) == {"toolu_2", "toolu_3"}
    total = len(texts[0]) + len(texts[3]) + sum(len(t) for t in shaped.values())
    assert total <= 20_000
    assert shaped["toolu_2"].startswith("[this turn's 4 results share 20000 characters")
    spilled = sorted(tmp_path.glob("batch-toolu_2-*.txt"))
    assert spilled and spilled[0].read_text() == texts[1]
