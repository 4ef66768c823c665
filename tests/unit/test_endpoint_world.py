"""A passed endpoint_check reaches the world model as a typed record of what it measured."""

from agent.world.model import WorldModel
from agent.world.render import render_compact
from tools.deploy.proof.generation_checks import GenerationChecks
from tools.deploy.proof.phases import Proof
from tools.deploy.proof.report import Report, Row
from tools.endpoint_check import verified_endpoint

MODEL = "Qwen/Qwen3.5-122B-A10B-FP8"


def row(concurrency: int, per_user: float, aggregate: float, ttft_ms: float) -> Row:
    latency = {"p50": ttft_ms, "p90": None, "p99": None}
    return Row(concurrency, 3, latency, latency, latency, per_user, aggregate, 1.0, None, 0.0)


def test_a_passed_endpoint_check_is_recorded_with_its_rates():
    changes = []
    world = WorldModel(on_change=lambda host, summary, new: changes.append(summary))
    rows = [row(1, 29.13, 26.4, 485.0), row(4, 15.7, 58.2, 677.0), row(16, 8.5, 127.8, 959.0)]
    proof = Proof(
        model=MODEL,
        models=[MODEL],
        generation=GenerationChecks("cobalt-7319", "round-trip ok", 55705, "found"),
        report=Report("vllm bench serve", rows, {}, "no GPU", None),
        files=None,
    )
    world.record_endpoint(verified_endpoint("spark-a:8000", proof))
    endpoint = world.endpoints["spark-a:8000"]
    assert endpoint.single_stream_tok_s == 29.13 and endpoint.aggregate_tok_s == 127.8
    assert endpoint.ttft_s == 0.485 and endpoint.concurrency == 16
    assert changes == ["endpoint spark-a:8000 verified"]
    assert f"endpoint spark-a:8000: {MODEL}, 29.13 tok/s" in render_compact(world)
