"""vLLM's tool-call and reasoning parsers for a model no recipe covers, from the model's own
config.json (and generation_config.json) and vLLM's documented parser table.

A recipe names its parsers; without one, vLLM serves tool calls and reasoning only when told which
parser reads the model's output (`--enable-auto-tool-choice --tool-call-parser NAME`,
`--reasoning-parser NAME`). The family is the config's `model_type` (what vLLM itself dispatches
on); the names are vLLM's registry names (vllm/tool_parsers/__init__.py,
vllm/reasoning/__init__.py) as docs/features/tool_calling.md and reasoning_outputs.md assign them
to families. A family absent here gets no parser, and the plan says so: a guessed parser breaks
tool calls where none leaves them as plain text. Families whose parser depends on more than the
config shows (DeepSeek-V3 against V3.1, both `deepseek_v3`; those that also need a chat template
from vLLM's examples) are left out for that reason.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

TOOLS_DOC = "vLLM docs/features/tool_calling.md"
REASONING_DOC = "vLLM docs/features/reasoning_outputs.md"
LLAMA_EOM = 128008  # <|eom_id|>: Llama 3.1+ ends a tool call with it (generation_config)

Config = dict[str, Any]


@dataclass(frozen=True)
class Row:
    """One family of vLLM's table: its parsers, and the evidence its config must show."""

    tool: str | None
    reasoning: str | None
    source: str
    evidence: Callable[[Config, Config], bool] = lambda config, generation: True


def _llama3_tools(config: Config, generation: Config) -> bool:
    """Llama 3.1 and later (JSON tool calls): rope scaling of type `llama3` in config.json, or
    <|eom_id|> among generation_config's end tokens; Llama 2 and 3.0 call no tools."""
    rope = config.get("rope_scaling")
    if isinstance(rope, dict) and rope.get("rope_type") == "llama3":
        return True
    eos = generation.get("eos_token_id")
    return LLAMA_EOM in (eos if isinstance(eos, list) else [eos])


FAMILIES: dict[str, Row] = {
    "gpt_oss": Row(
        "openai", "openai_gptoss", f"{TOOLS_DOC} (OpenAI OSS models); vllm/reasoning registry"
    ),
    "llama": Row("llama3_json", None, f"{TOOLS_DOC} (Llama 3.1+ JSON)", _llama3_tools),
    "qwen2": Row("hermes", None, f"{TOOLS_DOC} (Qwen2.5: hermes)"),
    "qwen3": Row("hermes", "qwen3", f"Qwen docs (hermes); {REASONING_DOC} (Qwen3: qwen3)"),
    "qwen3_moe": Row("hermes", "qwen3", f"Qwen docs (hermes); {REASONING_DOC} (Qwen3: qwen3)"),
    "mistral": Row("mistral", None, f"{TOOLS_DOC} (Mistral)"),
    "glm4_moe": Row("glm45", "glm45", f"{TOOLS_DOC} (GLM-4.5); {REASONING_DOC}"),
    "minimax_m2": Row("minimax_m2", "minimax_m2_append_think", f"{REASONING_DOC} (MiniMax-M2)"),
}


@dataclass(frozen=True)
class ModelParsers:
    """The parsers for one model and why: its family, where the table row comes from."""

    family: str
    tool: str | None
    reasoning: str | None
    source: str

    def flags(self) -> list[str]:
        """The serve flags, each as one shell word group (as recipes' flags are)."""
        flags = []
        if self.tool:
            flags += ["--enable-auto-tool-choice", f"--tool-call-parser {self.tool}"]
        if self.reasoning:
            flags.append(f"--reasoning-parser {self.reasoning}")
        return flags

    def line(self, where: str) -> str:
        """What the plan says of them."""
        if not self.tool and not self.reasoning:
            return (
                f"no tool-call or reasoning parser: model_type {self.family} ({where}) is not "
                "in vLLM's parser table; tool calls come back as plain text"
            )
        said = [f"tool-call parser {self.tool}"] if self.tool else []
        said += [f"reasoning parser {self.reasoning}"] if self.reasoning else []
        return f"{' and '.join(said)}: model_type {self.family} ({where}) in {self.source}"


def parsers_from_config(config: Any, generation: Any = None) -> ModelParsers | None:
    """The parsers for the model whose config.json is `config`; None without a model_type."""
    if not isinstance(config, dict):
        return None
    family = config.get("model_type")
    if not isinstance(family, str) or not family:
        return None
    row = FAMILIES.get(family)
    text = config.get("text_config")
    if row is None and isinstance(text, dict) and isinstance(text.get("model_type"), str):
        return parsers_from_config(text, generation)
    if row is None or not row.evidence(config, generation if isinstance(generation, dict) else {}):
        return ModelParsers(family, None, None, "")
    return ModelParsers(family, row.tool, row.reasoning, row.source)
