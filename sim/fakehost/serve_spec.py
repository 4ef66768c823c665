"""What an engine was asked to do: `vllm serve` / `sglang.launch_server` arguments as a spec,
the nodes that serve it, and the log line format both engines print. The engine needs TP × PP
GPUs (vLLM docs/serving/parallelism_scaling.md; SGLang `--tp`/`--pp-size`)."""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from . import fabric

HF_MOUNT = "/root/.cache/huggingface"


class EngineError(Exception):
    """The engine exits: the message is what its last log lines say."""


@dataclass
class ServeSpec:
    kind: str
    model: str
    tp: int = 1
    pp: int = 1
    port: int = 8000
    host: str = "0.0.0.0"
    util: float = 0.9
    backend: str = ""
    nnodes: int = 1
    rank: int = 0
    master: str = ""
    headless: bool = False
    served_name: str = ""
    max_model_len: int = 262144
    tool_parser: str = ""  # --tool-call-parser with --enable-auto-tool-choice; "" none

    @property
    def world(self) -> int:
        """GPUs the engine needs: tensor × pipeline parallel size (vLLM's world size)."""
        return self.tp * self.pp


@dataclass
class Node:
    host_dir: Path
    container: str
    id: str
    ip: str
    env: dict[str, str] = field(default_factory=dict)


def options(args: list[str]) -> tuple[list[str], dict[str, str]]:
    positional, opts, i = [], {}, 0
    while i < len(args):
        arg = args[i]
        if arg.startswith("-"):
            key, eq, value = arg.partition("=")
            if not eq and i + 1 < len(args) and not args[i + 1].startswith("-"):
                value, i = args[i + 1], i + 1
            opts[key] = value or "true"
        else:
            positional.append(arg)
        i += 1
    return positional, opts


def log(_where_from: object, level: str, where: str, text: str) -> None:
    stamp = time.strftime("%m-%d %H:%M:%S")
    print(f"{level} {stamp} [{where}] {text}", flush=True)


def node_ip(env: dict[str, str], state: dict[str, Any]) -> str:
    for key in ("VLLM_HOST_IP", "SGLANG_HOST_IP", "RAY_OVERRIDE_NODE_IP_ADDRESS"):
        if env.get(key):
            return env[key]
    return fabric.primary_ip(state)
