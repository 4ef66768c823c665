"""The agent's recon of both hosts: one batch, one model round, compact facts back to the model."""

import pytest

from agent.loop.scripted_client import ScriptedClient
from agent.loop.transcript import read_transcript
from agent.runtime.builder import open_runtime
from agent.runtime.settings import Settings
from sim.cluster import SimCluster
from tests.support.session_kit import text_turn, tool_turn

pytestmark = pytest.mark.slow


async def test_recon_of_two_hosts_is_one_batch_and_one_round(tmp_path):
    script = [
        tool_turn([("toolu_1", "recon", {"hosts": "all", "model_size_gb": 119})]),
        text_turn("The head's vllm_node must go and the worker's RoCE link is down."),
    ]
    async with SimCluster("seed-pair", tmp_path / "sim") as sim:
        inventory = sim.write_inventory(tmp_path / "sim" / "inventory.yaml")
        settings = Settings(
            inventory=inventory, transcripts_dir=tmp_path / "t", log_file=tmp_path / "log"
        )
        client = ScriptedClient(script)
        runtime = await open_runtime(settings, client=client, approver_factory=lambda rules: None)
        try:
            outcome = await runtime.session.send("what stands between us and Qwen3.5 TP=2?")
        finally:
            await runtime.aclose()

    assert outcome.stop == "end_turn"
    assert len(client.requests) == 2  # one round: the recon batch, then the answer
    result = client.requests[1].messages[-1]["content"][0]
    assert not result.get("is_error")
    facts = result["content"]
    assert len(facts) <= 3000  # compact facts, not raw dumps
    for expected in ("spark-a", "spark-b", "GB10", "580.95.05", "13.0", "vllm_node"):
        assert expected in facts
    assert "cannot start while vllm_node" in facts
    assert sorted(runtime.world.hosts) == ["spark-a", "spark-b"]
    events = read_transcript(runtime.transcript_path).events
    assert [e.name for e in events if e.type == "tool_call"] == ["recon"]
    updates = [e for e in events if e.type == "world_update"]
    assert any(f["severity"] == "blocker" for e in updates for f in e.findings)
