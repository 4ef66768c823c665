"""What a chaos model may do, as data hypothesis can draw and shrink.

A session is a list of `Turn`s. A turn holds tool calls (`Call`), a stop reason, and what goes
wrong around it: the stream cut mid-tool_use, or the operator interrupting the batch. A call's
input is either literal (drawn here: valid, wrong types, missing fields, 1 MB, control
characters) or symbolic (`plan:exact` by its hash; `plan:copied`, `plan:edited` retyped as
free-form plans; `plan:wrong-hash`): those are made from what the session computed when the turn
is played (agent/evaluation/chaos/planner.py).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from hypothesis import strategies as st

from tools.propose_plan import ProposePlanTool

HOSTS = ["spark-a", "spark-b"]
MODEL = "Qwen/Qwen3.5-122B-A10B-FP8"
CONTROL = "\x00\x07\x1b[31m\r\x08\u202e\u2028"
ONE_MB = "x" * (1 << 20)
APPROVALS = ["approved", "denied", "timed_out", "unavailable"]
MODES = ["plan", "ask", "auto-safe", "ci"]


@dataclass(frozen=True)
class Call:
    """One tool_use: `name` may be unknown; `input` literal, or a symbol (`"plan:exact"`)."""

    name: str
    input: dict[str, Any] | str
    reuse_id: bool = False  # the id of the call before it (a duplicated id)


@dataclass(frozen=True)
class Turn:
    calls: tuple[Call, ...] = ()
    stop_reason: str = "tool_use"
    cut: bool = False  # the stream ends mid-tool_use: the client raises a ModelError
    interrupt_after_s: float | None = None  # the operator stops the batch this long after


@dataclass
class Story:
    """A drawn session: its mode, the approver's answers in order, and the model's turns."""

    mode: str
    approvals: list[dict[str, Any]]
    turns: list[Turn]
    notes: list[str] = field(default_factory=list)


READS = [
    ("ssh_exec", {"host": "spark-a", "command": "nvidia-smi"}),
    ("ssh_exec", {"hosts": HOSTS, "command": "cat /etc/os-release; docker ps"}),
    ("ssh_exec", {"host": "spark-b", "command": "ibdev2netdev"}),
    ("docker_ctl", {"action": "ps", "host": "spark-b"}),
    ("web_fetch", {"url": "http://docs.spark.sim/vllm-two-sparks.html"}),
    ("todo_write", {"items": [{"content": "look around", "status": "in_progress"}]}),
    ("world_note", {"belief": "chaos was here", "evidence": "it said so"}),
    ("job_status", {"hosts": HOSTS}),
]
CHANGES = [
    ("ssh_exec", {"host": "spark-a", "command": "docker stop vllm_node"}),
    ("ssh_exec", {"host": "spark-b", "command": "sudo ip link set enp1s0f1np1 up"}),
    ("ssh_exec", {"host": "spark-a", "command": "docker rm -f vllm_node"}),
    ("docker_ctl", {"action": "stop", "host": "spark-a", "container": "vllm_node"}),
    ("job_start", {"name": "chaos", "command": "docker stop vllm_node", "hosts": ["spark-a"]}),
    ("job_stop", {"hosts": ["spark-a"], "names": ["chaos"], "grace": 0}),
]
TOOLS = sorted(
    {name for name, _ in READS + CHANGES}
    | {"recon", "plan_deployment", ProposePlanTool.name, "rollout_step", "endpoint_check"}
)
PLAN_SYMBOLS = [
    "plan:exact",
    "plan:exact",
    "plan:copied",
    "plan:edited",
    "plan:wrong-hash",
    "plan:bare",
]

json_leaf = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-(2**63), 2**63),
    st.floats(allow_nan=False),
    st.text(max_size=20),
    st.sampled_from([CONTROL, ONE_MB, "all", "spark-a", "$(reboot)", "../../etc/passwd"]),
)
json_value = st.recursive(
    json_leaf,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=8), inner),
    max_leaves=6,
)
json_objects = st.dictionaries(st.text(max_size=10), json_value, max_size=4)


def _poisoned(base: dict[str, Any]) -> st.SearchStrategy[dict[str, Any]]:
    """The input with one field dropped, retyped, or replaced by something hostile."""
    keys = sorted(base)
    if not keys:
        return st.just({"unexpected": CONTROL})
    return st.one_of(
        st.sampled_from(keys).map(lambda k: {x: v for x, v in base.items() if x != k}),
        st.tuples(st.sampled_from(keys), json_value).map(lambda kv: {**base, kv[0]: kv[1]}),
        st.just({**base, "extra_field": ONE_MB}),
    )


def _from(table: list[tuple[str, dict[str, Any]]]) -> st.SearchStrategy[Call]:
    exact = st.sampled_from(table).map(lambda t: Call(t[0], t[1]))
    bent = st.sampled_from(table).flatmap(lambda t: _poisoned(t[1]).map(lambda i: Call(t[0], i)))
    return st.one_of(exact, exact, bent)


rollout = st.builds(
    lambda step, attempts: Call(
        "rollout_step", {"step": step, "check_attempts": attempts, "check_interval_s": 0.2}
    ),
    st.one_of(st.integers(1, 9), st.integers(-1, 12)),
    st.integers(1, 2),
)
RECON = Call("recon", {"hosts": "all", "model_size_gb": 119})
PLAN = Call("plan_deployment", {"model": MODEL, "hosts": HOSTS, "model_size_gb": 119})
# recon and plan_deployment cost a second or two on the simulator: drawn rarely in the middle
deploy_calls = st.one_of(
    st.sampled_from(PLAN_SYMBOLS).map(lambda symbol: Call(ProposePlanTool.name, symbol)),
    rollout,
    rollout,
    rollout,
    st.just(Call("endpoint_check", {"host": "spark-a", "max_tokens": 8, "concurrency": 1})),
    st.integers(0, 7).map(lambda n: [RECON, PLAN][n] if n < 2 else Call("todo_write", {})),
)
wrong_calls = st.one_of(
    st.builds(Call, st.sampled_from(["rm_rf", "", "ssh_exec ", "SSH_EXEC"]), json_objects),
    st.builds(Call, st.sampled_from(TOOLS), json_objects),
    st.builds(Call, st.sampled_from(TOOLS), st.just({"x": ONE_MB, "y": CONTROL})),
)
any_call = st.one_of(_from(READS), _from(CHANGES), deploy_calls, deploy_calls, wrong_calls)
calls = st.lists(
    st.tuples(any_call, st.integers(0, 9)).map(
        lambda pair: Call(pair[0].name, pair[0].input, reuse_id=pair[1] == 0)
    ),
    min_size=0,
    max_size=4,
)
turns = st.builds(
    Turn,
    calls=calls.map(tuple),
    stop_reason=st.sampled_from(["tool_use"] * 6 + ["end_turn", "max_tokens", "pause_turn"]),
    cut=st.integers(0, 12).map(lambda n: n == 0),
    interrupt_after_s=st.one_of(st.none(), st.none(), st.none(), st.sampled_from([0.0, 0.05])),
)


def _step(number: int) -> Turn:
    return Turn(
        (Call("rollout_step", {"step": number, "check_attempts": 2, "check_interval_s": 0.2}),)
    )


#: a session that walks the deployment path first (recon, plan, a proposal, some steps in
#: order), so plans, approvals and changes on the hosts are reached often
happy_start = st.tuples(st.sampled_from(PLAN_SYMBOLS), st.integers(0, 8)).map(
    lambda pick: [
        Turn((RECON,)),
        Turn((PLAN,)),
        Turn((Call(ProposePlanTool.name, pick[0]),)),
        *(_step(n) for n in range(1, pick[1] + 1)),
    ]
)


@st.composite
def stories(draw: st.DrawFn, max_turns: int = 6) -> Story:
    mode = draw(st.sampled_from(["ask", "auto-safe", "plan", "ci"]))
    answers = draw(
        st.lists(
            st.builds(
                lambda kind, steps: {"kind": kind, "approve_steps": steps},
                st.sampled_from(["approved", "approved", "approved", *APPROVALS]),
                st.booleans(),
            ),
            max_size=8,
        )
    )
    start = draw(st.one_of(st.just([]), happy_start))
    if start:  # the operator approves the walk (the plan, then each step): the rest is chaos
        answers = [{"kind": "approved", "approve_steps": False}] * (len(start) - 2) + answers
    rest = draw(st.lists(turns, min_size=1, max_size=max_turns))
    return Story(mode=mode, approvals=answers, turns=[*start, *rest])
