"""Run code right after a module is imported, or now where it is already: without importing it.

Why: a face configures a library only if something imports it (structlog is configured the
moment it loads, agent/faces/logs.py), so a command that never uses the library never pays
for loading it.
"""

from __future__ import annotations

import importlib.machinery
import sys
from collections.abc import Callable
from types import ModuleType
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from importlib.abc import Loader


def when_imported(name: str, then: Callable[[ModuleType], None]) -> None:
    """Call `then(module)` once `name` is imported: now if it is, else right after its import."""
    if name in sys.modules:
        then(sys.modules[name])
    else:
        sys.meta_path.insert(0, _AfterImport(name, then))


class _AfterImport:
    """Finds `name` the standard way, once, and runs `then` when its module has executed. A meta
    path finder by its method, as the import system asks, and _ThenLoader a loader by its: not
    importlib.abc's classes, whose import loads importlib.resources, tempfile and more at every
    start of every face."""

    def __init__(self, name: str, then: Callable[[ModuleType], None]) -> None:
        self.name, self.then = name, then

    def find_spec(
        self, name: str, path: object = None, target: ModuleType | None = None
    ) -> importlib.machinery.ModuleSpec | None:
        if name != self.name:
            return None
        sys.meta_path.remove(self)
        spec = importlib.machinery.PathFinder.find_spec(name)
        if spec is not None and spec.loader is not None:
            spec.loader = _ThenLoader(spec.loader, self.then)
        return spec


class _ThenLoader:
    def __init__(self, inner: Loader, then: Callable[[ModuleType], None]) -> None:
        self.inner, self.then = inner, then

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> ModuleType | None:
        return self.inner.create_module(spec)

    def exec_module(self, module: ModuleType) -> None:
        self.inner.exec_module(module)
        self.then(module)
