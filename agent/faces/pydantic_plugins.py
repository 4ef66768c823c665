"""No pydantic plugin runs inside Scout: its models validate as written, and nothing else sees
the values they hold.

Why: pydantic loads every plugin that any installed distribution declares (the `pydantic`
entry-point group) and hands it each model's validator, so a package merely installed beside
Scout would see every value Scout validates (host facts, settings, tool input before its
redaction) and could change what a validation accepts. Finding them also costs each process a
scan of every installed distribution's metadata at its first model: about 45 ms of CPU on the
shared two-core machine, `scout recon`'s first model among them. Scout declares no plugin of
its own, so it asks pydantic for none, with pydantic's documented switch
(PYDANTIC_DISABLE_PLUGINS=__all__, read at each model pydantic builds), in its own process and
so in the processes it starts (the simulator among them).

In its own process Scout also hands pydantic a plugin loader that finds none without looking:
pydantic's own (`pydantic.plugin._loader`) imports importlib.metadata as it loads, and with it
email, zipfile and csv, some 20 ms of CPU in every command that builds a model, `scout recon`'s
while its host runs the probe, for plugins the switch turns away anyway. Anything else pydantic
asks of its loader comes from pydantic's own, loaded then: a pydantic whose loader changed
still works, at its own cost.
"""

from __future__ import annotations

import functools
import os
import sys
import types

DISABLE_PLUGINS = "PYDANTIC_DISABLE_PLUGINS"
# where pydantic looks its plugins up (pydantic/plugin/_schema_validator.py: get_plugins)
PLUGIN_LOADER = "pydantic.plugin._loader"


class _NoPluginLoader(types.ModuleType):
    """pydantic's plugin loader as Scout runs it: no plugin, no distribution's metadata read."""

    @staticmethod
    def get_plugins() -> tuple[()]:
        return ()

    def __getattr__(self, name: str) -> object:
        if name.startswith("__"):  # what the import system asks of a module (`__path__`: none)
            raise AttributeError(name)
        return getattr(_pydantic_loader(), name)


@functools.cache
def _pydantic_loader() -> types.ModuleType:
    """pydantic's own loader, loaded from its file (its name is this stand-in's)."""
    import importlib.machinery
    import importlib.util

    import pydantic.plugin

    spec = importlib.machinery.PathFinder.find_spec(PLUGIN_LOADER, pydantic.plugin.__path__)
    if spec is None or spec.loader is None:
        raise ImportError(f"pydantic has no {PLUGIN_LOADER}", name=PLUGIN_LOADER)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def keep_pydantic_plugins_out() -> None:
    """From here on, pydantic builds every model of this process and its children without
    plugins, whatever the environment said (and this process without looking for any, where
    pydantic has not looked yet)."""
    os.environ[DISABLE_PLUGINS] = "__all__"
    sys.modules.setdefault(PLUGIN_LOADER, _NoPluginLoader(PLUGIN_LOADER))
