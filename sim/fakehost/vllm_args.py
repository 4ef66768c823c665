"""Which `vllm serve` flags a vLLM version knows: one not known stops the engine at its argument
parser, as argparse does (`vllm serve: error: unrecognized arguments: …`, exit status 2).

The table: each flag with the first release that has it and, for removed ones, the first that
no longer does (vLLM's `vllm/engine/arg_utils.py` and `entrypoints/openai/cli_args.py` at each
tag; the release notes at github.com/vllm-project/vllm/releases). Flags present since before
the oldest version a scenario's image carries (0.10.2) are listed with 0.0. Sources of the
dated entries: sim/SOURCES.md.
"""

from __future__ import annotations

import re

Version = tuple[int, ...]
OLDEST: Version = (0, 0)

# flag (and its short form) → (since, until); until None: still known
KNOWN: dict[str, tuple[Version, Version | None]] = {
    **dict.fromkeys(
        (
            "--model",
            "--host",
            "--port",
            "--tensor-parallel-size",
            "-tp",
            "--pipeline-parallel-size",
            "-pp",
            "--distributed-executor-backend",
            "--gpu-memory-utilization",
            "--max-model-len",
            "--served-model-name",
            "--trust-remote-code",
            "--max-num-seqs",
            "--max-num-batched-tokens",
            "--kv-cache-dtype",
            "--dtype",
            "--quantization",
            "--seed",
            "--enforce-eager",
            "--enable-prefix-caching",
            "--chat-template",
            "--download-dir",
            "--revision",
            "--enable-auto-tool-choice",
            "--tool-call-parser",
            "--load-format",
            "--enable-expert-parallel",
            "--speculative-config",
            "--reasoning-parser",
            "--disable-log-requests",
            "--swap-space",
            "--block-size",
        ),
        (OLDEST, None),
    ),
    # multi-node without Ray: --nnodes/--node-rank/--master-addr/--master-port/--headless
    **dict.fromkeys(
        ("--nnodes", "--node-rank", "--master-addr", "--master-port", "--headless"),
        (OLDEST, None),
    ),
    # `--task` was deprecated for `--runner`/`--convert` and later removed: NGC 26.05 and
    # later answer `unrecognized arguments: --task embed` (docs/sources.md §9)
    "--task": (OLDEST, (0, 19)),
}

_NUMBERS = re.compile(r"^v?(\d+(?:\.\d+)*)")


def version_of(text: str) -> Version:
    """`0.19.1+nv26.05` → (0, 19, 1); an unreadable version counts as the oldest."""
    match = _NUMBERS.match(text.strip())
    return tuple(int(p) for p in match[1].split(".")) if match else OLDEST


def unrecognized(args: list[str], version: str) -> list[str]:
    """The words argparse would report, in order: an unknown flag and the value after it."""
    have = version_of(version)
    left: list[str] = []
    i = 0
    while i < len(args):
        word = args[i]
        i += 1
        if not word.startswith("-"):
            continue
        name = word.partition("=")[0]
        span = KNOWN.get(name)
        known = span is not None and span[0] <= have and (span[1] is None or have < span[1])
        if known:
            continue
        left.append(word)
        if "=" not in word and i < len(args) and not args[i].startswith("-"):
            left.append(args[i])
            i += 1
    return left


def usage_error(words: list[str]) -> str:
    return (
        "usage: vllm serve [model_tag] [options]\n"
        f"vllm serve: error: unrecognized arguments: {' '.join(words)}\n"
    )
