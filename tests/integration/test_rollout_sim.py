"""rollout_step on the simulated cluster: the approved plan, one proven step at a time."""

import pytest

from agent.loop.scripted_client import ScriptedClient
from agent.loop.transcript import read_transcript
from agent.replay.redrive import sim_runtime
from agent.runtime.builder import open_runtime
from agent.runtime.resume import rebuild
from agent.runtime.settings import Settings
from agent.safety.approvers.scripted import ScriptedApprover
from agent.standin.server import MessagesAPIServer
from sim.cluster import SimCluster
from tests.support.session_kit import sdk_client, text_turn, tool_turn

pytestmark = pytest.mark.slow

PLAN_INPUT = {
    "model": "Qwen/Qwen3.5-122B-A10B-FP8",
    "hosts": ["spark-a", "spark-b"],
    "model_size_gb": 119,
}


PATIENT = {"check_attempts": 20, "check_interval_s": 0.3}


async def _rollout(scenario, steps_to_run, plan):
    script = [
        tool_turn([("r", "recon", {"hosts": "all"})]),
        tool_turn([("p", "plan_deployment", PLAN_INPUT)]),
        tool_turn([("a", "propose_plan", {"plan_hash": plan["plan_hash"]})]),
    ]
    batches = [b if isinstance(b, list) else [b] for b in steps_to_run]  # a list: one turn
    script += [
        tool_turn([(call_id, "rollout_step", {"step": n, **PATIENT}) for call_id, n in batch])
        for batch in batches
    ]
    script.append(text_turn("done"))
    approver = ScriptedApprover([("approved", "")] * 20, name="operator")
    client = ScriptedClient(script)
    async with sim_runtime(
        scenario, client=client, approver_factory=lambda rules: approver
    ) as runtime:
        await runtime.session.send("deploy")
    results = {}
    for request in client.requests:
        for block in request.messages[-1]["content"]:
            if block.get("type") == "tool_result":
                results[block["tool_use_id"]] = block
    return results, approver


async def _computed_plan(scenario):
    script = [
        tool_turn([("r", "recon", {"hosts": "all"})]),
        tool_turn([("p", "plan_deployment", PLAN_INPUT)]),
        text_turn("ok"),
    ]
    async with sim_runtime(
        scenario, client=ScriptedClient(script), approver_factory=lambda rules: None
    ) as runtime:
        await runtime.session.send("plan")
        events = read_transcript(runtime.transcript_path).events
    data = next(e for e in events if e.type == "tool_result" and e.id == "p").data
    return {**data["plan"], "plan_hash": data["plan_hash"]}  # proposed by its hash


async def test_the_whole_plan_rolls_out_step_by_step():
    plan = await _computed_plan("seed-pair")
    steps = len(plan["steps"])
    calls = [("s1", 1), ("early", 4), *((f"s{n}", n) for n in range(2, steps + 1))]
    results, approver = await _rollout("seed-pair", calls, plan)
    assert "Plan approved" in results["a"]["content"]
    early = results["early"]
    assert early["is_error"] and early["content"].startswith(
        "Step 4 cannot run now: it needs step 2 (bring the RoCE link up"
    )
    for n in range(1, steps + 1):
        assert not results[f"s{n}"].get("is_error"), results[f"s{n}"]["content"]
    last = results[f"s{steps}"]["content"]
    assert "The rollout is complete. Probed spark-a, spark-b again for the world model." in last
    destructive = [r for r in approver.seen if r.risk == "destructive"]
    assert destructive and "docker stop vllm_node" in destructive[0].summary


async def test_weights_missing_on_the_worker_are_copied_over_the_fabric():
    plan = await _computed_plan("seed-pair-no-model")
    steps = len(plan["steps"])
    results, _ = await _rollout(
        "seed-pair-no-model", [(f"s{n}", n) for n in range(1, steps + 1)], plan
    )
    done = [results[f"s{n}"]["content"] for n in range(1, steps + 1)]
    assert not [n for n in range(1, steps + 1) if results[f"s{n}"].get("is_error")], done
    assert any("copy the weights to spark-b over the fabric" in text for text in done)
    assert "The rollout is complete" in done[-1]


async def test_from_zero_the_image_is_copied_to_the_offline_worker_and_the_rollout_completes():
    """fresh-pair: the worker has no internet, so its image comes from the head with
    `docker save IMAGE | ssh WORKER docker load` (the simulator's ssh runs it on the worker)."""
    plan = await _computed_plan("fresh-pair")
    steps = len(plan["steps"])
    results, _ = await _rollout("fresh-pair", [(f"s{n}", n) for n in range(1, steps + 1)], plan)
    done = [results[f"s{n}"]["content"] for n in range(1, steps + 1)]
    assert not [n for n in range(1, steps + 1) if results[f"s{n}"].get("is_error")], done
    copy = next(text for text in done if "done: copy nvcr.io/nvidia/vllm:26.05-py3" in text)
    assert "Loaded image: nvcr.io/nvidia/vllm:26.05-py3" in copy, copy
    # the image is asked what it runs once on spark-a (spark-b's is its copy): no Ray
    asked = next(t for t in done if "done: ask nvcr.io/nvidia/vllm:26.05-py3 what it runs" in t)
    assert "the image holds vllm" in asked
    assert "26.05-py3 on spark-a holds vllm 0.19.1+nv26.05, nccl 2.28.9, no ray/sglang" in asked
    assert "The rollout is complete" in done[-1]


async def test_independent_steps_run_in_one_batch_and_a_step_needing_them_waits():
    """fresh-pair: the pull (3) and the download (4) need only the internet and run together;
    the weights' copy (7) asked in the same batch needs the download, so it is refused, names
    what it waits for, and runs once that passed."""
    plan = await _computed_plan("fresh-pair")
    titles = [s["title"] for s in plan["steps"]]
    assert titles[2].startswith("pull ") and titles[3].startswith("download ")
    assert titles[6].startswith("copy the weights to spark-b over the fabric (enp1s0f1np1)")
    assert titles[7].startswith("measure the fabric: all_gather_perf over 2 nodes")
    calls = [
        ("s1", 1),
        ("s2", 2),
        [("s3", 3), ("s4", 4), ("early", 7)],
        *((f"s{n}", n) for n in range(5, len(titles) + 1)),
    ]
    results, _ = await _rollout("fresh-pair", calls, plan)
    for n in range(1, len(titles) + 1):
        assert not results[f"s{n}"].get("is_error"), results[f"s{n}"]["content"]
    early = results["early"]["content"]
    assert results["early"]["is_error"]
    assert early.startswith("Step 7 cannot run now: it needs step 4 (download ")
    assert "Step 3/12 done: pull nvcr.io/nvidia/vllm:26.05-py3" in results["s3"]["content"]
    assert "Step 4/12 done: download " in results["s4"]["content"]
    assert "measured bus bandwidth 21.4 GB/s (171 Gb/s)" in results["s8"]["content"]
    assert "The rollout is complete" in results[f"s{len(titles)}"]["content"]


async def test_a_failed_step_stops_the_rollout_and_names_the_rollback(tmp_path):
    """fresh-pair, but the registry no longer serves the NGC image: the pull job fails, the step
    ends with docker's own error line and its rollback, and the next step is refused."""
    gone = tmp_path / "registry-without-the-image.yaml"
    gone.write_text(
        "extends: fresh-pair\nname: registry-without-the-image\n"
        "hosts:\n  spark-a:\n    docker:\n      pullable: []\n"
    )
    plan = await _computed_plan("fresh-pair")
    steps = len(plan["steps"])
    calls = [(f"s{n}", n) for n in range(1, steps + 1)]
    results, _ = await _rollout(str(gone), calls, plan)
    failed = [n for n in range(1, steps + 1) if results[f"s{n}"].get("is_error")]
    assert failed
    first = results[f"s{failed[0]}"]["content"]
    assert "failed" in first and "Proposed rollback on" in first
    assert "job pull-image failed on spark-a: " in first
    assert 'Get "https://nvcr.io/v2/"' in first
    assert "The rollout stopped at a failed step" in results[f"s{failed[1]}"]["content"]


def _first_steps(plan, last, closing):
    """A session's turns: recon, plan, the plan proposed, steps 1..`last`, then `closing`."""
    return [
        tool_turn([("r", "recon", {"hosts": "all"})]),
        tool_turn([("p", "plan_deployment", PLAN_INPUT)]),
        tool_turn([("a", "propose_plan", {"plan_hash": plan["plan_hash"]})]),
        *(
            tool_turn([(f"s{n}", "rollout_step", {"step": n, **PATIENT})])
            for n in range(1, last + 1)
        ),
        text_turn(closing),
    ]


async def _session_on(sim, tmp_path, script, *, transcript, resume=None):
    """One live session on the running cluster; returns the tool_result blocks by call id."""
    settings = Settings(
        inventory=sim.write_inventory(tmp_path / "inventory.yaml"),
        transcripts_dir=tmp_path,
        log_file=tmp_path / "scout.log",
    )
    approver = ScriptedApprover([("approved", "")] * 10, name="operator")
    with MessagesAPIServer(script) as api:
        runtime = await open_runtime(
            settings,
            client=sdk_client(api.url),
            approver_factory=lambda rules: approver,
            transcript_path=transcript,
            resume=resume,
        )
        try:
            await runtime.session.send("deploy")
        finally:
            await runtime.aclose()
        posts = [r.body for r in api.requests if r.path == "/v1/messages"]
    return {
        block["tool_use_id"]: block
        for body in posts
        for block in body["messages"][-1]["content"]
        if block.get("type") == "tool_result"
    }


async def test_a_resumed_session_runs_the_next_step_of_its_approved_rollout(tmp_path):
    plan = await _computed_plan("seed-pair")
    first = tmp_path / "first.jsonl"
    async with SimCluster("seed-pair", tmp_path / "sim") as sim:
        before = await _session_on(
            sim,
            tmp_path,
            _first_steps(plan, 1, "step 1 is done; the session stops here"),
            transcript=first,
        )
        assert "Plan approved" in before["a"]["content"]
        assert before["s1"]["content"].startswith(f"Step 1/{len(plan['steps'])} done")
        after = await _session_on(
            sim,
            tmp_path,
            [tool_turn([("s2", "rollout_step", {"step": 2, **PATIENT})]), text_turn("next")],
            transcript=tmp_path / "resumed.jsonl",
            resume=rebuild(read_transcript(first).events),
        )
    step2 = after["s2"]
    assert not step2.get("is_error"), step2["content"]
    assert step2["content"].startswith(f"Step 2/{len(plan['steps'])} done")
    assert "No approved deployment plan" not in step2["content"]
    notices = [e for e in read_transcript(tmp_path / "resumed.jsonl").events if e.type == "notice"]
    assert any("holds again; its rollout: 1/" in n.message for n in notices)


async def test_a_copy_to_a_worker_that_went_down_fails_with_sshs_line(tmp_path):
    """fresh-pair: the image and the weights are on the head; the worker is powered off before
    the image is copied to it (`docker save | ssh WORKER docker load`): the step fails with
    OpenSSH's own line, as on real hardware, and names its rollback."""
    plan = await _computed_plan("fresh-pair")
    copy = next(n for n, s in enumerate(plan["steps"], 1) if s["title"].startswith("copy nvcr"))
    first = tmp_path / "first.jsonl"
    async with SimCluster("fresh-pair", tmp_path / "sim") as sim:
        before = await _session_on(
            sim,
            tmp_path,
            _first_steps(plan, copy - 1, "the worker is about to lose power"),
            transcript=first,
        )
        assert all(not before[f"s{n}"].get("is_error") for n in range(1, copy)), before
        sim.inject("spark-b", down=True)
        after = await _session_on(
            sim,
            tmp_path,
            [tool_turn([("c", "rollout_step", {"step": copy, **PATIENT})]), text_turn("stop")],
            transcript=tmp_path / "resumed.jsonl",
            resume=rebuild(read_transcript(first).events),
        )
    failed = after["c"]
    assert failed.get("is_error"), failed["content"]
    assert "job copy-image-spark-b failed on spark-a: " in failed["content"]
    assert "ssh: connect to host 192.168.200.13 port 22: No route to host" in failed["content"]
    assert "Proposed rollback on" in failed["content"]
