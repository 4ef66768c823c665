"""The models `scout recon` builds are quick to build: they run while its host runs the probe.

Two things made pydantic's work on them slow, and each is held off here, in a fresh
interpreter that imports what recon imports (agent/faces/recon.py):

- A builtin `default_factory` (`list`, `set`, `tuple`): pydantic reads every factory's
  signature as it builds a schema, and a builtin's it parses from text, through tokenize and
  ast: about 0.4 ms each, 25 ms across recon's models. An empty `[]` default is copied per
  model by pydantic, so it means the same.
- Postponed annotations (`from __future__ import annotations`) in a module that defines them:
  pydantic then evaluates each field's type from its text, about 30 ms across recon's models.
"""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from agent.world.model import WorldModel

# the models of what recon imports: where a field's default comes from a builtin pydantic
# reads a text signature of, and the modules that define them with postponed annotations
RECON_MODELS = """
import __future__, json, sys
from pydantic import BaseModel
import agent.runtime.settings
from agent.faces.recon import READING_AND_PRINTING
for name in READING_AND_PRINTING:
    __import__(name)
def models(base):
    for sub in base.__subclasses__():
        yield sub
        yield from models(sub)
ours = [m for m in models(BaseModel) if m.__module__.startswith(("agent.", "tools."))]
slow = [f"{m.__module__}.{m.__qualname__}.{name}" for m in ours
        for name, field in m.model_fields.items()
        if field.default_factory in (list, set, tuple, frozenset)]
postponed = sorted({m.__module__ for m in ours
                    if vars(sys.modules[m.__module__]).get("annotations")
                    is __future__.annotations})
print(json.dumps({"models": len(ours), "slow": slow, "postponed": postponed}))
"""


@pytest.fixture(scope="module")
def recon_models() -> dict:
    """What RECON_MODELS found, in one fresh interpreter for the tests below."""
    run = subprocess.run(
        [sys.executable, "-c", RECON_MODELS], capture_output=True, text=True, check=True
    )
    return json.loads(run.stdout)


def test_recons_models_take_no_builtin_default_factory(recon_models: dict) -> None:
    assert recon_models["models"] > 40  # recon's facts, parsers, world model and settings
    assert recon_models["slow"] == []


def test_recons_model_modules_do_not_postpone_annotations(recon_models: dict) -> None:
    # the settings and the world model keep theirs: one model each, whose annotations name
    # types imported only for the type checker
    assert set(recon_models["postponed"]) <= {"agent.runtime.settings", "agent.world.model"}


def test_an_empty_default_is_each_models_own() -> None:
    first, second = WorldModel(), WorldModel()
    first.notes.append(object())  # type: ignore[arg-type]
    first.hosts["a"] = object()  # type: ignore[assignment]
    assert second.notes == [] and second.hosts == {}
