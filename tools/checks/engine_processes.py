"""Which GPU processes are serving engines, recognised by name, never by elimination.

A plan may propose stopping an engine that holds the memory a model needs (a stale vLLM, a
forgotten llama-server). Anything else on the GPU (the desktop's gnome-shell or Xorg, a system
daemon, another user's training run, a bare `python3`) is named and left alone: stopping it
could end someone's session or work, and Scout cannot know it is safe. So recognition is
positive: a process is an engine only when its name says which engine it is, as the engines
title their processes (vLLM's `VLLM::EngineCore`/`VLLM::Worker_TP0`, SGLang's
`sglang::scheduler`, Ray's `ray::RayWorkerWrapper` for vLLM's workers, Triton, TensorRT-LLM's
`trtllm-serve`, llama.cpp's `llama-server`, Ollama's runner, TGI's `text-generation-*`).
"""

from __future__ import annotations

import re

_ENGINE = re.compile(
    r"^(?:VLLM::|sglang::|ray::RayWorkerWrapper)|"
    r"^(?:tritonserver|trtllm-serve|llama-server|ollama(?:_llama_server)?|"
    r"text-generation-(?:launcher|server|router)|lmdeploy|vllm)(?:\s|$)",
    re.I,
)


def is_engine(process_name: str) -> bool:
    """True when the process name (as nvidia-smi lists it, path or title) names an engine."""
    base = process_name.strip().rsplit("/", 1)[-1] if "::" not in process_name else process_name
    return bool(_ENGINE.match(base.strip()))
