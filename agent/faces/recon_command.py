"""`scout recon`'s flags and its start: the hosts are asked before anything else loads.

Why a module of its own: recon's whole run is one SSH round trip per host, so every millisecond
the process spends before it starts `ssh` is added to the answer (bench/startup.py measures it
against the floor). The CLI therefore builds recon's parser alone when `recon` is the command
(cli.parser_for), without importing the other faces' modules, and this module imports nothing
but argparse until the command runs.
"""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from agent.faces.settings_loader import SettingsLoader


def add_recon_command(sub: argparse._SubParsersAction, load: SettingsLoader) -> None:
    recon = sub.add_parser(
        "recon",
        help="probe every host in parallel and print the world model (no LLM)",
        description="Run the read-only probe pack on the inventory's hosts and print the facts "
        "and findings as tables, or as JSON with --json. Exit status 1 if a host was unreachable.",
    )
    recon.add_argument("--inventory", help="inventory YAML file (default from settings)")
    recon.add_argument("--hosts", help="comma-separated host names (default: all)")
    recon.add_argument("--json", action="store_true", help="print the world model as JSON")
    recon.add_argument("--model-size-gb", type=float, help="model weights in GB, to check the fit")
    recon.add_argument(
        "--trust-new-hosts",
        action="store_true",
        help="record unknown host keys (trust on first use)",
    )
    recon.set_defaults(func=lambda args: _cmd_recon(args, load))


def _cmd_recon(args: argparse.Namespace, load: SettingsLoader) -> int:
    import gc
    from pathlib import Path

    # Without the cycle collector: recon is one short round whose imports (pydantic's models
    # above all) leave some 60,000 objects that live as long as the process and about 2,000 in
    # cycles, so the collector's passes over them, while the hosts run the probe, only take CPU
    # from the host's side (bench/startup.py: about 0.02 s of recon here). The process ends
    # with the round, its garbage with it.
    gc.disable()

    from agent.faces.recon import EXIT_USAGE, recon_main, start_recon, usage_failure

    # An --inventory flag wins over the settings, so its hosts are asked first: their answers
    # come back while the settings, the logging and the parsers load (scout recon, start fast).
    started = start_recon(args, Path(args.inventory)) if args.inventory else None
    settings = load(
        {"inventory": args.inventory, "trust_new_hosts": args.trust_new_hosts or None}, log=True
    )
    if settings is None:
        if started is not None:
            started.stop()
        return EXIT_USAGE
    if settings.inventory is None:
        return usage_failure(
            "no inventory: pass --inventory FILE, or name one as `inventory:` in the settings "
            "file (`scout init` writes both)"
        )
    started = started or start_recon(args, settings.inventory)
    return recon_main(args, started, trust_new_hosts=settings.trust_new_hosts)
