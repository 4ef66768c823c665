from agent.loop.events import ToolResultEvent
from agent.world.feed import EndpointFeed
from agent.world.model import WorldModel
from agent.world.render import render_compact


def test_a_passed_endpoint_check_is_recorded_with_its_rates():
    world = WorldModel()
    changes = []
    world.on_change(lambda host, summary, new: changes.append(summary))
    data = {
        "endpoint": "spark-a:8000",
        "model": "Qwen/Qwen3.5-122B-A10B-FP8",
        "single": {"tok_s": 23.4, "ttft_s": 0.31},
        "concurrency": 4,
        "aggregate_tok_s": 58.4,
    }
    feed = EndpointFeed(world)
    feed.on_event(ToolResultEvent(id="t", name="endpoint_check", text="ok", data=data))
    feed.on_event(ToolResultEvent(id="u", name="endpoint_check", text="down", is_error=True))
    endpoint = world.endpoints["spark-a:8000"]
    assert endpoint.single_stream_tok_s == 23.4 and endpoint.aggregate_tok_s == 58.4
    assert changes == ["endpoint spark-a:8000 verified"]
    assert "endpoint spark-a:8000: Qwen/Qwen3.5-122B-A10B-FP8, 23.4 tok/s" in render_compact(world)
