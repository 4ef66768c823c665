"""The Tool contract every hand of Scout implements, and the result it returns.

A tool declares a pydantic `Input` model (its JSON schema goes to the model), says how risky a
given input is (`risk`, the whole risk contract), which hosts it touches, and runs
asynchronously against a `ToolContext`.
"""

from __future__ import annotations

import copy
import functools
from abc import ABC, abstractmethod
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar, Generic, TypeVar

from pydantic import BaseModel, ConfigDict, Field

from tools.risk.assessment import Risk, RiskAssessment
from tools.schema import compact_schema
from tools.web.page_fetcher import PageFetcher
from tools.world.store import WorldStore


@dataclass(frozen=True)
class RuleShape:
    """What an allow rule must say to cover a call of a tool; the rules read this, never the
    tool's name (agent/safety/rules.py).

    An allow rule covers a call only when it names every field the call sets, except the `open`
    fields a rule may leave out (where and how long: a host list, a deadline, how much output)
    and fields left at None or at their `defaults`. A field the shape does not mention must be
    named, so a field a tool gains later is never covered silently. `required` fields an allow
    rule must name with a literal value to be an allow rule at all (which docker action).
    `named` fields an allow rule must name, a pattern standing for the value (ssh_exec's
    command: a rule that leaves it out would allow any command on its hosts).
    `example` is a well-formed allow rule, shown when one is not. The rule the operator's `a`
    adds names the same fields (agent/safety/session_rules.py).
    """

    open: frozenset[str] = frozenset({"host"})
    defaults: Mapping[str, Any] = field(default_factory=dict)
    required: tuple[str, ...] = ()
    named: tuple[str, ...] = ()
    example: str = ""

    def set_fields(self, tool_input: Mapping[str, Any]) -> set[str]:
        """The fields of a call an allow rule must name: set, not open, not at a default."""
        return {
            key
            for key, value in tool_input.items()
            if value is not None
            and key not in self.open
            and not (key in self.defaults and value == self.defaults[key])
        }


def input_words(data: dict[str, Any]) -> str:
    """`host spark-a · port 8000 · hosts spark-a, spark-b`: a tool's input as a line of words."""
    parts = []
    for key, value in data.items():
        if isinstance(value, list):
            value = ", ".join(str(item) for item in value)
        elif isinstance(value, dict):
            value = ", ".join(f"{k}={v}" for k, v in value.items())
        parts.append(f"{key} {str(value)[:80]}")
    return " · ".join(parts)


class Reason(BaseModel):
    """Why a call was refused or failed, as data beside the sentence: `kind` names the class
    (`deny_rule`, `no_plan`, `denied`, `unknown_plan_hash` …), `fields` what it was about.
    Code and tests read this; the sentence is for the model and the person."""

    model_config = ConfigDict(extra="forbid")

    kind: str
    fields: dict[str, Any] = Field(default_factory=dict)


class ToolResult(BaseModel):
    """What one call produced: `text` for the model, `data` for the world model and the faces;
    an error may carry its structured `reason`."""

    model_config = ConfigDict(extra="forbid")

    text: str
    is_error: bool = False
    data: dict[str, Any] = Field(default_factory=dict)
    meta: dict[str, Any] = Field(default_factory=dict)
    reason: Reason | None = None

    @classmethod
    def error(cls, text: str, reason: Reason | None = None, **meta: Any) -> ToolResult:
        return cls(text=text, is_error=True, meta=meta, reason=reason)


ProgressCallback = Callable[[str], None]


@dataclass
class ToolContext:
    """What the session lends a tool while it runs; every part is typed and made by the builder.

    `spill_dir` receives full outputs that were cut for the model. SSH is not here: the tools
    that need it get the session's pool when they are built, and exist only with an inventory,
    so theirs is never absent. `world` is the world model, which tools update with the typed
    facts they find; `web` the session's fetcher. The session's plans, deployments and rollouts
    are not here either: the tools that need them get them when they are built
    (tools/deploy/rollout/state.py). `progress` lets a long call report a line to the face while it
    runs. `redact` masks secrets in text a tool writes to disk itself (spill files); the
    session passes its redactor. `wall` is set per call by the executor when the call is
    read-only and no human approved it: what it runs on a host runs inside the wall
    (tools/wall/).
    """

    spill_dir: Path
    world: WorldStore | None = None
    web: PageFetcher | None = None
    progress: ProgressCallback | None = None
    redact: Callable[[str], str] = field(default=lambda text: text)
    wall: bool = False

    def report(self, line: str) -> None:
        if self.progress is not None:
            self.progress(line)


InputT = TypeVar("InputT", bound=BaseModel)


class Tool(ABC, Generic[InputT]):
    """One capability the planner can call.

    Subclasses set `name`, `description` and `Input`; they override `risk` when an input can
    change anything (a tool that runs shell asks the ShellJudge it was given), `hosts` when it
    reaches hosts (for per-host caps and approval fingerprints), `rule_shape` when a rule may
    leave some of its fields out, and `timeout_s` when the executor's default deadline does not
    fit.
    """

    name: ClassVar[str]
    description: ClassVar[str]
    Input: ClassVar[type[BaseModel]]
    #: what an allow rule must name to cover a call; by default every field but the host
    rule_shape: ClassVar[RuleShape] = RuleShape()
    #: a call asks a person to approve a whole plan: the gate reviews it as a plan (its approval
    #: is the session's grant) and history compaction keeps its result whole. The places that
    #: need this read the property, never the tool's name.
    approves_plan: ClassVar[bool] = False

    def risk(self, params: InputT) -> RiskAssessment:
        """How risky this call is; the gate decides on it. By default a tool only reads."""
        return RiskAssessment(Risk.READ_ONLY, f"{self.name} is {Risk.READ_ONLY.label}")

    def hosts(self, params: InputT) -> list[str]:
        return []

    def commands(self, params: InputT) -> list[tuple[str, str]] | None:
        """What this call will run where: (host, the exact command text) in order, or None
        when it runs no command a plan could name (the gate then never counts it as a plan
        step). The gate, plan matching and step approvals read this, never the tool's name."""
        return None

    @classmethod
    def rule_fields(cls) -> frozenset[str]:
        """The fields a rule may name: the input's, and `host` when the tool reaches hosts
        (a rule's `host=` then holds for every host of the call, `hosts` lists included)."""
        reaches_hosts = cls.hosts is not Tool.hosts
        return frozenset(cls.Input.model_fields) | ({"host"} if reaches_hosts else set())

    def timeout_s(self, params: InputT) -> float | None:
        """Deadline for the whole call; None lets the executor's default apply."""
        return None

    def summary(self, params: InputT) -> str:
        """One line for progress panels and approval prompts: the input as `field value` pairs
        a person reads (never raw JSON), long values cut."""
        return input_words(params.model_dump(mode="json", exclude_none=True))[:200]

    @abstractmethod
    async def run(self, params: InputT, ctx: ToolContext) -> ToolResult: ...

    def definition(self) -> dict[str, Any]:
        """The tool as the Messages API wants it: the schema compact, without the input model's
        docstring (the tool's description says it for the model)."""
        schema = copy.deepcopy(_input_schema(self.Input))
        return {"name": self.name, "description": self.description, "input_schema": schema}


@functools.cache
def _input_schema(model: type[BaseModel]) -> dict[str, Any]:
    """An input model's compact schema, built once: pydantic takes ~4 ms a tool, and every
    runtime (a chaos run opens two a session) asks for all of them."""
    schema = compact_schema(model.model_json_schema())
    schema.pop("description", None)
    return schema
