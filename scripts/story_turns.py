"""The model's turns of Scout's recorded stories, as Scout's engineers wrote them.

scripts/record_demo.py serves these turns through the local Messages-API server while every tool
runs for real against the story's simulated cluster; each story's turns are built from the plan
that plan_deployment returned on a fresh copy of its cluster.
"""

from __future__ import annotations

from typing import Any

MODEL = "Qwen/Qwen3.5-122B-A10B-FP8"
GUIDE = "http://docs.spark.sim/vllm-two-sparks.html"
PLAN_INPUT = {"model": MODEL, "hosts": ["spark-a", "spark-b"], "model_size_gb": 119}
STEPS = [
    "Recon both Sparks and read the two-node guide",
    "Propose a plan",
    "Free spark-a's memory and bring spark-b's RoCE link up",
    "Start the engine on both nodes",
    "Serve the model with TP=2 and measure it",
]
PATIENT = {"check_attempts": 60, "check_interval_s": 1.0}


def todo(done: int, steps: list[str] = STEPS) -> dict[str, Any]:
    items = []
    for index, content in enumerate(steps):
        status = "completed" if index < done else "in_progress" if index == done else "pending"
        items.append({"content": content, "status": status})
    return {"items": items}


def turn(text: str, calls: list[tuple[str, str, dict[str, Any]]], stop: str = "tool_use") -> dict:
    """A scripted reply; its usage is what the server counts of the request it answers."""
    content: list[dict[str, Any]] = [{"type": "text", "text": text}] if text else []
    content += [{"type": "tool_use", "id": i, "name": n, "input": p} for i, n, p in calls]
    return {"turn": {"content": content, "stop_reason": stop}}


def opening_turn(text: str, steps: list[str]) -> dict:
    """The first turn of every story: the todo list, recon of every host, the two-node guide."""
    return turn(
        text,
        [
            ("toolu_01", "todo_write", todo(0, steps)),
            ("toolu_02", "recon", {"hosts": "all", "model_size_gb": 119}),
            ("toolu_03", "web_fetch", {"url": GUIDE}),
        ],
    )


def rollout(first: int, last: int, text: str | None = None) -> list[dict]:
    """One rollout_step turn per plan step from `first` to `last` (1-based); `text` leads the
    first, each other says the step before it is proven."""
    turns = []
    for n in range(first, last + 1):
        proven = f"Step {n - 1} is proven; next, step {n}."
        turns.append(turn(text if text and n == first else proven, [step_call(n)]))
    return turns


def step_call(n: int) -> tuple[str, str, dict[str, Any]]:
    return (f"toolu_s{n}", "rollout_step", {"step": n, **PATIENT})


def proposal(plan: dict[str, Any]) -> dict[str, Any]:
    """propose_plan's input: the computed plan by its hash, never a copy of it."""
    return {"plan_hash": plan["plan_hash"]}


def numbers(plan: dict[str, Any], prefix: str) -> list[int]:
    """The plan's step numbers whose title starts with `prefix`."""
    return [n for n, step in enumerate(plan["steps"], 1) if step["title"].startswith(prefix)]


def endpoint_turn(call_id: str) -> dict:
    return turn(
        "It lists the model. Now the proof through an SSH port forward: generations whose "
        "answers are checked, and vLLM's own benchmark over a concurrency sweep.",
        [(call_id, "endpoint_check", {"host": "spark-a", "port": 8000, "model": MODEL})],
    )


def seed_pair_script(plan: dict[str, Any]) -> list[dict]:
    """The seed: the old container must go and the worker's link come up; rollout_step runs
    the plan's steps one proven step at a time (the engine as a job whose log is checked),
    the download and the image checks at once."""
    count = len(plan["steps"])
    first = numbers(plan, "ask ") + numbers(plan, "measure the fabric")
    assert first == [3, 4], first  # they need nothing of each other: one batch
    return [
        opening_turn(
            "Before touching anything I'll map both Sparks in one round and read the two-node "
            "guide.",
            STEPS,
        ),
        turn(
            "Three things stand in the way: `vllm_node` holds about 98 GB of spark-a's unified "
            "memory (29 GB left, and each node needs about 60 GB), spark-b's RoCE link is down, "
            "and the two ConnectX ports share no subnet yet. Both Sparks match otherwise (GB10, "
            "driver 580.95.05, CUDA 13.0, the vLLM 26.05 image). Let me turn that into a plan.",
            [("toolu_04", "plan_deployment", PLAN_INPUT)],
        ),
        turn(
            "Here is the plan for your approval. Stopping `vllm_node` ends whatever it serves; "
            "everything else can be rolled back.",
            [("toolu_05", "todo_write", todo(1)), ("toolu_06", "propose_plan", proposal(plan))],
        ),
        turn(
            "Approved. First spark-a's memory, then spark-b's link.",
            [("toolu_07", "todo_write", todo(2)), step_call(1)],
        ),
        *rollout(2, 2, "spark-a has its memory back; now spark-b's link."),
        turn("", [("toolu_08", "todo_write", todo(3))]),
        turn(
            "Both changes hold. The image check (both Sparks hold the same image) and the "
            "fabric test need nothing of each other, so they run together.",
            [step_call(n) for n in first],
        ),
        *rollout(
            max(first) + 1,
            count - 1,
            "The image holds vLLM and the fabric carries what it should. Now the engine, one "
            "proven step at a time.",
        ),
        turn("", [("toolu_09", "todo_write", todo(4))]),
        *rollout(count, count, "The worker waits for rank 0. Now vLLM on spark-a."),
        endpoint_turn("toolu_10"),
        turn("", [("toolu_11", "todo_write", todo(5))]),
        turn(
            f"Done. `{MODEL}` is served with tensor parallelism 2 across spark-a and spark-b, "
            "with NCCL on the RoCE link (both PCIe twins), at http://spark-a:8000. Its "
            "proof ends this session: vLLM's own benchmark, with a chart and JSON beside the "
            "transcript. It is recorded as a deployment: `scout status` reads it live, and "
            "`scout teardown --restore` takes it down and starts vllm_node again.",
            [],
            stop="end_turn",
        ),
    ]


TRIO_STEPS = [
    "Recon the three Sparks and read the two-node guide",
    "Choose the nodes and propose a plan",
    "Measure the fabric and start the engine on the chosen nodes",
    "Serve the model and measure it",
]
TRIO_PLAN_INPUT = {"model": MODEL, "hosts": ["spark-a", "spark-b", "spark-c"], "model_size_gb": 119}


def spark_trio_script(plan: dict[str, Any]) -> list[dict]:
    """Three Sparks, a model that needs two: the plan picks the nodes, rollout_step runs it."""
    count = len(plan["steps"])
    first = numbers(plan, "ask ") + numbers(plan, "measure the fabric")
    assert first == [1, 2], first  # they need nothing of each other: one batch
    step = step_call
    return [
        opening_turn(
            "I'll map all three Sparks in one round and read the two-node guide first.", TRIO_STEPS
        ),
        turn(
            "All three Sparks are idle and alike, and every ConnectX port is up: NVIDIA's ring, "
            "one /24 per cable. The ~119 GB model does not fit on one Spark but fits on two, so "
            "I'll let plan_deployment choose the nodes from all three.",
            [("toolu_04", "plan_deployment", TRIO_PLAN_INPUT)],
        ),
        turn(
            "The plan uses spark-a and spark-b over their own cable (192.168.0.0/24) with "
            "tensor parallelism 2; spark-c stays free. Here it is for your approval.",
            [
                ("toolu_05", "todo_write", todo(1, TRIO_STEPS)),
                ("toolu_06", "propose_plan", proposal(plan)),
            ],
        ),
        turn(
            "Approved. The image check (the two Sparks hold the same image) and the fabric test "
            "need nothing of each other: one batch. Then one proven step at a time.",
            [("toolu_07", "todo_write", todo(2, TRIO_STEPS)), *map(step, first)],
        ),
        *rollout(3, count - 1),
        turn(
            "The fabric is measured and the worker waits for rank 0. Now vLLM itself.",
            [("toolu_08", "todo_write", todo(3, TRIO_STEPS)), step(count)],
        ),
        endpoint_turn("toolu_09"),
        turn("", [("toolu_10", "todo_write", todo(4, TRIO_STEPS))]),
        turn(
            f"Done. `{MODEL}` is served with tensor parallelism 2 on spark-a and spark-b, over "
            "the cable between them (NCCL on both PCIe twins of each end), at "
            "http://spark-a:8000; spark-c is untouched. Its proof ends this session: vLLM's "
            "own benchmark, with a chart and JSON beside the transcript. It is recorded as a "
            "deployment: `scout status` reads it live, `scout teardown` takes it down.",
            [],
            stop="end_turn",
        ),
    ]


FRESH_STEPS = [
    "Recon both Sparks and read the two-node guide",
    "Propose a plan from zero",
    "Free spark-a and bring spark-b's link up",
    "Fetch the image and the weights at once, then copy them to spark-b",
    "Measure the fabric",
    "Start the engine on both nodes and serve with TP=2",
    "Prove the endpoint and measure it",
]


def fresh_pair_script(plan: dict[str, Any]) -> list[dict]:
    """The seed pair before anything was fetched: the plan provisions as jobs (the pull and the
    download at once, in one batch; then the copies to the worker without internet, over the
    fabric), measures the fabric, and serves with vLLM's multiprocess recipe; rollout_step runs
    each step, independent ones together."""
    titles = [s["title"] for s in plan["steps"]]

    def number(prefix: str) -> int:
        return numbers(plan, prefix)[0]

    step = step_call

    pull, download = number("pull "), number("download ")
    test, engine = number("measure the fabric"), number("start the engine container")
    image_copy, weights_copy = number("copy nvcr"), number("copy the weights")
    [ask] = numbers(plan, "ask ")
    batches = [(pull, download), (image_copy, ask, weights_copy)]
    assert batches == [(3, 4), (5, 6, 7)] and test == 8, titles  # each batch runs at once
    return [
        opening_turn(
            "Before touching anything I'll map both Sparks in one round and read the two-node "
            "guide.",
            FRESH_STEPS,
        ),
        turn(
            "Nothing is fetched yet: neither Spark has the NGC vLLM image, neither HF cache "
            "holds the weights, and spark-b reaches the internet only through spark-a. "
            "`vllm_node` still holds about 98 GB of spark-a's memory and spark-b's RoCE link is "
            "down. Let me plan it from zero.",
            [("toolu_04", "plan_deployment", PLAN_INPUT)],
        ),
        turn(
            "Here is the plan for your approval. The image pull and the weights download on "
            "spark-a need only the internet, so they run at once, each as a job with progress; "
            "then spark-a copies the image to spark-b with `docker save | ssh … docker load` "
            "and the weights with rsync over the fabric, to the address spark-b's port gets "
            "once its link is up. "
            "The image is asked what it runs once it is there, and the engine starts only if "
            "it holds vLLM. all_gather_perf measures the fabric before the engine starts. Ray "
            "is not known to be in the NGC image and spark-b could not pip install it, so vLLM "
            "runs its multiprocess recipe, which needs no Ray.",
            [
                ("toolu_05", "todo_write", todo(1, FRESH_STEPS)),
                ("toolu_06", "propose_plan", proposal(plan)),
            ],
        ),
        turn(
            "Approved. One proven step at a time, starting with spark-a's memory.",
            [("toolu_07", "todo_write", todo(2, FRESH_STEPS)), step(1)],
        ),
        *rollout(2, pull - 1),
        turn(
            f"Both changes hold. Steps {pull} and {download} need nothing but the internet, so "
            "I start them together: the pull and the download, as two jobs at once.",
            [("toolu_08", "todo_write", todo(3, FRESH_STEPS)), step(pull), step(download)],
        ),
        turn(
            "Both are done. Three steps need only those: spark-a copies the image and the "
            "weights to spark-b, and its image is asked what it runs (spark-b's copy is the "
            "same image).",
            [step(image_copy), step(ask), step(weights_copy)],
        ),
        turn(
            "The image and the weights are on both Sparks, and the image holds vLLM without "
            "Ray, so the multiprocess recipe stands. Before the engine depends on it, the "
            "fabric test.",
            [("toolu_09", "todo_write", todo(4, FRESH_STEPS)), step(test)],
        ),
        *rollout(test + 1, engine - 1),
        turn(
            "The fabric carries what it should. Now the engine.",
            [("toolu_10", "todo_write", todo(5, FRESH_STEPS)), step(engine)],
        ),
        *rollout(engine + 1, len(titles)),
        endpoint_turn("toolu_11"),
        turn("", [("toolu_12", "todo_write", todo(7, FRESH_STEPS))]),
        turn(
            f"Done, from zero. `{MODEL}` is served with tensor parallelism 2 across spark-a and "
            "spark-b (vLLM's multiprocess recipe, NCCL on the RoCE link, whose bandwidth the "
            "fabric test above measured) at http://spark-a:8000. Its proof ends this session: "
            "vLLM's own benchmark, with a chart and JSON beside the transcript. It is recorded as "
            "a deployment: `scout status` reads it live, and `scout teardown --restore` takes "
            "it down and starts vllm_node again on spark-a.",
            [],
            stop="end_turn",
        ),
    ]
