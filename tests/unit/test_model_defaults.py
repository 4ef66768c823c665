"""The models `scout recon` builds take their empty defaults as written, not from a builtin.

pydantic reads the signature of every `default_factory` as it builds a model's schema, and a
builtin's (`list`, `set`, `tuple`) it parses from text, through tokenize and ast: about 0.4 ms
each, which across recon's models came to 25 ms of its start (tools/world/facts.py). An empty
`[]` default is copied per model by pydantic, so it means the same.
"""

from __future__ import annotations

import json
import subprocess
import sys

from agent.world.model import WorldModel

# in a fresh interpreter: the models of what recon imports (agent/faces/recon.py), and where a
# field's default comes from a builtin that pydantic reads a text signature of
FIELDS_WITH_BUILTIN_FACTORIES = """
import json
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
print(json.dumps({"models": len(ours), "slow": slow}))
"""


def test_recons_models_take_no_builtin_default_factory() -> None:
    found = json.loads(
        subprocess.run(
            [sys.executable, "-c", FIELDS_WITH_BUILTIN_FACTORIES],
            capture_output=True,
            text=True,
            check=True,
        ).stdout
    )
    assert found["models"] > 40  # recon's facts, parsers, world model and settings
    assert found["slow"] == []


def test_an_empty_default_is_each_models_own() -> None:
    first, second = WorldModel(), WorldModel()
    first.notes.append(object())  # type: ignore[arg-type]
    first.hosts["a"] = object()  # type: ignore[assignment]
    assert second.notes == [] and second.hosts == {}
