"""spark-vllm-docker's own template step and command shape, as its `run-recipe.py` does them.

The runner (eugr/spark-vllm-docker `run-recipe.py`, `generate_launch_script`) fills the recipe's
`command` with Python's `str.format(**params)`, `params` being the recipe's `defaults` overlaid
by its CLI overrides: `{name}` is a parameter, `{{` and `}}` are literal braces (JSON in a flag:
`--speculative-config '{{"method":"mtp"}}'`). A `{name}` with no value stops the runner
("Missing parameter in recipe command"); so does anything else `str.format` rejects. The filled
text then runs as one bash command, so its words are what bash reads: line continuations joined,
quotes removed. Scout does the same, so a flag reaches vLLM exactly as the runner passes it.
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Mapping
from dataclasses import dataclass

# the runner's `strip_distributed_executor_backend` (no-Ray multi-node and solo runs)
EXECUTOR = re.compile(r"--distributed-executor-backend(?:=|\s+)\S+")
_NUMBER = re.compile(r"^-\d")


class TemplateError(ValueError):
    """The command cannot be filled or read; the message says why, in one line."""


def fill(template: str, params: Mapping[str, object]) -> str:
    """`template.format(**params)`, with the runner's refusal as a one-line reason."""
    try:
        return template.format(**params)
    except KeyError as exc:
        raise TemplateError(
            f"`{{{exc.args[0]}}}` in `command` has no value (not in `defaults`): the runner "
            "stops with 'Missing parameter in recipe command'"
        ) from None
    except (ValueError, IndexError, AttributeError) as exc:
        raise TemplateError(f"`command` is not a valid str.format template ({exc})") from None


def words(command: str) -> list[str]:
    """The words bash reads from the filled command (continuations joined, quotes removed)."""
    joined = command.replace("\\\n", " ")
    lines = [line for line in joined.split("\n") if line.strip()]
    if len(lines) > 1:
        raise TemplateError(
            f"`command` holds {len(lines)} shell commands (a line without a trailing `\\`); "
            "the runner's launch script would run them one after another"
        )
    try:
        return shlex.split(joined)
    except ValueError as exc:
        raise TemplateError(f"`command` does not split into shell words ({exc})") from None


@dataclass(frozen=True)
class ServeCommand:
    """`vllm serve MODEL` and its flags, each flag with all its values
    (`--cudagraph-capture-sizes 5 10 15 20` is one flag with four)."""

    engine: str
    model: str | None
    flags: tuple[tuple[str, ...], ...]


def read_command(all_words: list[str]) -> ServeCommand:
    """Engine, model and flag groups of `vllm serve …`, `python3 -m sglang.launch_server …` or
    `sglang serve …`."""
    if len(all_words) > 1 and all_words[0].endswith("vllm") and all_words[1] == "serve":
        rest = all_words[2:]
        model = rest.pop(0) if rest and not rest[0].startswith("-") else None
        return ServeCommand("vllm", model, _groups(rest))
    if all_words[:2] == ["sglang", "serve"]:  # SGLang's own CLI: launch_server's flags
        rest = all_words[2:]
    elif "sglang.launch_server" in all_words:
        rest = all_words[all_words.index("sglang.launch_server") + 1 :]
    else:
        raise TemplateError("`command` runs neither `vllm serve` nor SGLang's server")
    groups = _groups(rest)
    model = next((g[1] for g in groups if g[0] == "--model-path" and len(g) > 1), None)
    return ServeCommand("sglang", model, groups)


def _groups(rest: list[str]) -> tuple[tuple[str, ...], ...]:
    groups: list[list[str]] = []
    for word in rest:
        if word.startswith("-") and not _NUMBER.match(word):
            name, eq, value = word.partition("=")
            groups.append([name, value] if eq else [name])
        elif groups:
            groups[-1].append(word)
        else:
            raise TemplateError(f"`{word}` follows no flag in `command`")
    return tuple(tuple(g) for g in groups)


def canonical(flag: str) -> str:
    """One name per vLLM option: `-tp` and `--tensor-parallel-size`, `--a_b` and `--a-b`."""
    short = {"-tp": "--tensor-parallel-size", "-pp": "--pipeline-parallel-size"}
    flag = short.get(flag, flag)
    return flag[:2] + flag[2:].replace("_", "-") if flag.startswith("--") else flag
