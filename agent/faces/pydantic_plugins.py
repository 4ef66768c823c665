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
"""

from __future__ import annotations

import os

DISABLE_PLUGINS = "PYDANTIC_DISABLE_PLUGINS"


def keep_pydantic_plugins_out() -> None:
    """From here on, pydantic builds every model of this process and its children without
    plugins, whatever the environment said."""
    os.environ[DISABLE_PLUGINS] = "__all__"
