"""`ChaosClient`: a ModelClient that plays a drawn `Story`, turn by turn, in process.

Symbolic inputs are made from what the session computed so far (the latest plan
plan_deployment returned, read off the transcript's events as they are written), so a drawn
story can propose exactly that plan, a changed copy, or one with a made-up hash. Requests are
checked as the Messages API would check them; one it would refuse is recorded as broken (it is
Scout's bug, whatever the model did) and the turn fails as it would live.
"""

from __future__ import annotations

import asyncio
import copy
from collections import deque
from collections.abc import Callable, Sequence
from typing import Any

from agent.evaluation.chaos.draw import draw
from agent.evaluation.chaos.moves import CONTROL, Call, Turn
from agent.loop.events import Event, ToolResultEvent
from agent.loop.model_turn import (
    AssistantTurn,
    ModelError,
    RetrySink,
    TextSink,
    TurnRequest,
    cached_request_params,
)
from agent.loop.recorder import SessionListener
from agent.loop.request_rules import check_request
from agent.loop.token_estimate import PromptCacheModel, content_tokens

BARE_PLAN = {
    "goal": "chaos",
    "steps": [
        {
            "title": "stop it",
            "hosts": ["spark-a"],
            "actions": ["docker stop vllm_node"],
            "expected_downtime": "none",
            "rollback": "docker start vllm_node",
            "success_check": "docker ps",
        }
    ],
}


class ChaosClient(SessionListener):
    """Answers each model call with the story's next turn; `broken` lists what Scout got wrong."""

    def __init__(self, turns: list[Turn], *, model: str = "claude-chaos") -> None:
        self.model = model
        self.turns = deque(turns)
        self.broken: list[str] = []
        self.requests = 0
        self.interrupt: Callable[[], None] = lambda: None
        self._plan: dict[str, Any] | None = None
        self._plan_hash: str | None = None
        self._last_id: str | None = None
        self._cache = PromptCacheModel()

    def on_event(self, event: Event) -> None:
        """A listener on the session's events: remembers the latest computed plan."""
        if isinstance(event, ToolResultEvent) and event.name == "plan_deployment":
            plan, plan_hash = event.data.get("plan"), event.data.get("plan_hash")
            if isinstance(plan, dict):
                self._plan, self._plan_hash = plan, plan_hash

    async def stream(
        self, request: TurnRequest, on_text: TextSink, on_retry: RetrySink | None = None
    ) -> AssistantTurn:
        self.requests += 1
        body = cached_request_params(request)
        problem = check_request(body)
        if problem is not None:
            self.broken.append(f"request {self.requests} would be refused: {problem.message}")
            raise ModelError(f"the API refused the request: {problem.message}")
        if not self.turns:
            return self._turn([{"type": "text", "text": "Done."}], "end_turn", body)
        turn = self.turns.popleft()
        content = [self._tool_use(call, n) for n, call in enumerate(turn.calls)]
        if turn.cut:
            raise ModelError("the stream ended mid-tool_use (connection reset)")
        if turn.interrupt_after_s is not None:
            asyncio.get_running_loop().call_later(turn.interrupt_after_s, self.interrupt)
        text = [{"type": "text", "text": f"Turn {self.requests}{CONTROL[:2]}"}]
        on_text(text[0]["text"])
        return self._turn(text + content, turn.stop_reason, body)

    def _turn(
        self, content: list[dict[str, Any]], stop: str, body: dict[str, Any]
    ) -> AssistantTurn:
        usage = self._cache.usage(body)
        usage["output_tokens"] = content_tokens(content)
        return AssistantTurn(
            content=content,
            stop_reason=stop,
            usage=usage,
            usage_source="estimate",
            model=self.model,
            request_id=f"req_chaos{self.requests:05d}",
        )

    def _tool_use(self, call: Call, position: int) -> dict[str, Any]:
        call_id = f"toolu_c{self.requests:03d}_{position}"
        if call.reuse_id and self._last_id is not None:
            call_id = self._last_id
        self._last_id = call_id
        return {"type": "tool_use", "id": call_id, "name": call.name, "input": self._input(call)}

    def _input(self, call: Call) -> dict[str, Any]:
        if isinstance(call.input, dict):
            return copy.deepcopy(call.input)
        plan = copy.deepcopy(self._plan) if self._plan else None
        if call.input == "plan:exact" and self._plan_hash:
            return {"plan_hash": self._plan_hash}  # as plan_deployment asks
        if call.input == "plan:copied" and plan:
            return _free_form(plan)  # retyped: only ever another plan
        if call.input == "plan:edited" and plan:
            plan["steps"][0]["actions"] = [*plan["steps"][0]["actions"], "reboot"]
            return _free_form(plan)
        if call.input == "plan:wrong-hash" and plan:
            return {"plan_hash": "plan:0123456789abcdef"}
        return copy.deepcopy(BARE_PLAN)


def _free_form(plan: dict[str, Any]) -> dict[str, Any]:
    """A computed plan retyped by the model as a free-form one (goal, steps, risks)."""
    return {key: plan[key] for key in ("goal", "steps", "risks") if key in plan}


def planners(at: int, names: Sequence[str]) -> Callable[[Any], ChaosClient]:
    """`scout eval`'s chaos planner: a scenario plays one story drawn from seed `at`, the same
    for its name whichever others run (the one at position i of `names` plays story i + 1: the
    first story drawn is hypothesis's simplest, a single empty turn)."""
    drawn = draw(len(names) + 1, at)
    stories = {name: drawn[(i + 1) % len(drawn)] for i, name in enumerate(names)}
    return lambda scenario: ChaosClient(stories[scenario.name].turns)
