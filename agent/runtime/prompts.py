"""Prompts and playbooks: Markdown files in the `agent.prompts` package data, loaded by name.

They are read with importlib.resources, so an installed Scout (a wheel, pipx) finds them as
surely as a checkout does.
"""

from __future__ import annotations

from functools import cache
from importlib.resources import files

PROMPTS = files("agent.prompts")


@cache
def load_prompt(name: str) -> str:
    resource = PROMPTS / f"{name}.md"
    if not resource.is_file():
        known = ", ".join(sorted(p.name[:-3] for p in PROMPTS.iterdir() if p.name.endswith(".md")))
        raise FileNotFoundError(f"no prompt named {name!r} in prompts (have: {known})")
    return resource.read_text(encoding="utf-8")


PLAYBOOKS = ("recon", "deploy-vllm-ray", "deploy-vllm-multinode", "deploy-sglang")


@cache
def system_prompt() -> str:
    """The system prompt and every playbook: one static prefix, cached by the API as a whole."""
    parts = [load_prompt("system"), "# Playbooks"]
    parts += [load_prompt(name) for name in PLAYBOOKS]
    return "\n\n".join(part.strip() for part in parts)
