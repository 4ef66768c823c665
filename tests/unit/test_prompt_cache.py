"""The usage estimate and the prompt cache model, and where Scout puts its breakpoints."""

from typing import Any

from agent.loop.history import apply_edit, briefing_position
from agent.loop.model_turn import TurnRequest, cached_request_params
from agent.loop.request_rules import MAX_BREAKPOINTS, check_request
from agent.loop.token_estimate import PromptCacheModel, estimate_input_tokens, prefix_blocks

LONG = "The head holds 98 GB in vllm_node; the worker's RoCE link is down. " * 80  # ~5.4k chars


def request(messages: list[dict[str, Any]]) -> dict[str, Any]:
    return cached_request_params(
        TurnRequest("claude-sonnet-4-5", 4096, "You are Scout.", [], messages)
    )


def wide_turn(first: int, calls: int) -> list[dict[str, Any]]:
    uses = [
        {"type": "tool_use", "id": f"toolu_{n}", "name": "echo", "input": {"text": str(n)}}
        for n in range(first, first + calls)
    ]
    results = [
        {"type": "tool_result", "tool_use_id": f"toolu_{n}", "content": f"answer {n}"}
        for n in range(first, first + calls)
    ]
    return [
        {"role": "assistant", "content": [{"type": "text", "text": "All at once."}, *uses]},
        {"role": "user", "content": results},
    ]


def test_the_estimate_is_four_characters_a_token_for_each_block_plus_framing():
    body = {"model": "m", "messages": [{"role": "user", "content": "x" * 400}]}
    # the string's JSON is 402 characters (its quotes): 101 tokens, and 3 for the message
    assert estimate_input_tokens(body) == 101 + 3
    assert [block.tokens for block in prefix_blocks(body)] == [104]


def test_a_prefix_is_written_once_then_read():
    cache = PromptCacheModel()
    messages = [{"role": "user", "content": [{"type": "text", "text": LONG}]}]
    first = cache.usage(request(messages))
    assert first["cache_read_input_tokens"] == 0 and first["cache_creation_input_tokens"] > 1024
    again = cache.usage(request(messages))
    assert again["cache_read_input_tokens"] == first["cache_creation_input_tokens"]


def test_a_prefix_under_the_minimum_is_not_cached():
    cache = PromptCacheModel()
    usage = cache.usage(request([{"role": "user", "content": "short"}]))
    assert usage["cache_creation_input_tokens"] == usage["cache_read_input_tokens"] == 0


def test_a_batch_of_sixteen_calls_still_reads_the_cached_prefix():
    history = [{"role": "user", "content": [{"type": "text", "text": LONG}]}, *wide_turn(1, 1)]
    cache = PromptCacheModel()
    cache.usage(request(history))  # the previous turn: writes up to its newest message
    before = sum(block.tokens for block in prefix_blocks(request(history)))
    history += wide_turn(2, 16)  # 33 new blocks, beyond the API's 20-block lookback
    body = request(history)
    assert cache.usage(body)["cache_read_input_tokens"] == before

    only_newest = PromptCacheModel()
    only_newest.usage(request(history[:3]))
    for message in body["messages"][:-1]:
        for block in message["content"]:
            block.pop("cache_control", None)
    assert only_newest.usage(body)["cache_read_input_tokens"] < before  # lookback misses it


def test_scout_places_at_most_four_breakpoints_and_its_requests_pass_the_rules():
    history = [{"role": "user", "content": [{"type": "text", "text": LONG}]}]
    for turn in range(6):
        history += wide_turn(turn * 20, 3)
        body = request(history)
        marks = sum(
            "cache_control" in block
            for part in (body["system"], *(m["content"] for m in body["messages"]))
            for block in part
        )
        assert marks == 3 <= MAX_BREAKPOINTS
        assert check_request(body) is None


def test_after_a_compaction_the_history_before_the_old_boundary_is_still_read():
    history = [{"role": "user", "content": [{"type": "text", "text": LONG}]}]
    for turn in range(8):
        history += wide_turn(turn * 10, 1)
    stub = "[compacted: echo → ok; 9 chars in transcript event 3; recall_result reads it]"
    apply_edit(history, {"toolu_0": stub, "toolu_10": stub}, "[Scout briefing at turn 3]")
    cache = PromptCacheModel()
    cache.usage(request(history))
    history += wide_turn(100, 1)
    cache.usage(request(history))
    index, position = briefing_position(history)  # the old boundary
    kept = [*history[:index], {**history[index], "content": history[index]["content"][:position]}]
    before = sum(block.tokens for block in prefix_blocks(request(kept)))
    apply_edit(history, {"toolu_20": stub, "toolu_30": stub}, "[Scout briefing at turn 5]")
    body = request(history)
    assert sum("cache_control" in b for m in body["messages"] for b in m["content"]) == 3
    assert cache.usage(body)["cache_read_input_tokens"] >= before
