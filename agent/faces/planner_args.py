"""The planner's endpoint on the command line: `--model` and `--base-url`, one meaning everywhere.

`scout chat`, `scout run` and `scout eval` take the same two flags; they win over the settings
file and the environment (`SCOUT_MODEL`, `ANTHROPIC_BASE_URL`), as every flag does.
"""

from __future__ import annotations

import argparse
from typing import Any

BASE_URL_HELP = (
    "the planner's Messages-API endpoint, its root without /v1 (default: Anthropic's, or "
    "ANTHROPIC_BASE_URL): a gateway, or a model you serve with vLLM, e.g. http://10.0.0.5:8000"
)


def add_planner_flags(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--model", help="model name (default from settings; vLLM: its served name)")
    parser.add_argument("--base-url", help=BASE_URL_HELP)


def planner_flags(args: argparse.Namespace) -> dict[str, Any]:
    """The settings the flags give (None: not given, the settings decide)."""
    return {"model": args.model, "base_url": args.base_url}
