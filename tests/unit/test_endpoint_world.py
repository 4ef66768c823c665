"""A passed endpoint_check reaches the world model as a typed record of what it measured."""

from agent.world.model import WorldModel
from agent.world.render import render_compact
from tools.deploy.endpoint import EndpointReport
from tools.deploy.endpoint_http import StreamStats
from tools.deploy.endpoint_tool import verified_endpoint
from tools.deploy.generation_checks import GenerationChecks


def test_a_passed_endpoint_check_is_recorded_with_its_rates():
    changes = []
    world = WorldModel(on_change=lambda host, summary, new: changes.append(summary))
    report = EndpointReport(
        health_status=200,
        models=["Qwen/Qwen3.5-122B-A10B-FP8"],
        model="Qwen/Qwen3.5-122B-A10B-FP8",
        generation=GenerationChecks("cobalt-7319", "round-trip ok", 222822, "found"),
        single=StreamStats(ttft_s=0.31, tokens=118, duration_s=5.31, tokens_from="usage"),
        concurrency=4,
        aggregate_tok_s=58.4,
    )
    world.record_endpoint(verified_endpoint("spark-a:8000", report))
    endpoint = world.endpoints["spark-a:8000"]
    assert endpoint.single_stream_tok_s == 23.4 and endpoint.aggregate_tok_s == 58.4
    assert endpoint.ttft_s == 0.31 and endpoint.concurrency == 4
    assert changes == ["endpoint spark-a:8000 verified"]
    assert "endpoint spark-a:8000: Qwen/Qwen3.5-122B-A10B-FP8, 23.4 tok/s" in render_compact(world)
