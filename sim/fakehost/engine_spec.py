"""What the fake engines (`vllm serve`, `sglang.launch_server`) work with: the serve command as
data, the nodes it runs on, and the error that ends the engine with its last log lines."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

HF_MOUNT = "/root/.cache/huggingface"


class EngineError(Exception):
    """The engine exits: the message is what its last log lines say."""


@dataclass
class ServeSpec:
    kind: str
    model: str
    tp: int = 1
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


@dataclass
class Node:
    host_dir: Path
    container: str
    id: str
    ip: str
    env: dict[str, str] = field(default_factory=dict)
