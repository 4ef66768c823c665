"""Prompts and playbooks are Markdown files under prompts/, loaded by name."""

from __future__ import annotations

from functools import cache
from pathlib import Path

PROMPTS_DIR = Path(__file__).resolve().parents[2] / "prompts"


@cache
def load_prompt(name: str) -> str:
    path = PROMPTS_DIR / f"{name}.md"
    if not path.is_file():
        known = ", ".join(sorted(p.stem for p in PROMPTS_DIR.glob("*.md")))
        raise FileNotFoundError(f"no prompt named {name!r} in {PROMPTS_DIR} (have: {known})")
    return path.read_text(encoding="utf-8")


PLAYBOOKS = ("recon", "deploy-vllm-ray", "deploy-vllm-multinode", "deploy-sglang")


@cache
def system_prompt() -> str:
    """The system prompt and every playbook: one static prefix, cached by the API as a whole."""
    parts = [load_prompt("system"), "# Playbooks"]
    parts += [load_prompt(name) for name in PLAYBOOKS]
    return "\n\n".join(part.strip() for part in parts)
