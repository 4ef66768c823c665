"""`scout recon`: the probe pack on every host in parallel, printed as the world model. No LLM.

Start fast: the hosts are asked first. While they connect and run the probe, a thread imports
what reading their answers and printing them needs (the parsers, the facts' models, the checks,
the tables): a third of recon's imports, done in time the process would spend waiting.
"""

from __future__ import annotations

import argparse
import asyncio
import importlib
import json
import sys
import threading
from pathlib import Path
from typing import TYPE_CHECKING

from rich.console import Console

from agent.faces.console import screen_console
from agent.faces.passphrase_prompt import terminal_passphrase_prompt
from tools.recon.probe import probe_hosts
from tools.ssh import Inventory, SSHError, SSHPool, UnknownHostError

if TYPE_CHECKING:
    from agent.world.model import WorldModel

EXIT_OK, EXIT_UNREACHABLE, EXIT_USAGE = 0, 1, 2
# in the order recon uses them: the probe's answers are parsed first, then printed
READING_AND_PRINTING = ("tools.recon.probe_parse", "agent.world.model", "agent.world.tables")


def _fail(message: str) -> int:
    print(f"scout recon: {message}", file=sys.stderr)
    return EXIT_USAGE


def _import_meanwhile() -> None:
    """Import READING_AND_PRINTING on a thread of its own, while this one talks to the hosts.

    Meanwhile the main thread imports only what connecting needs (tools.ssh has loaded it), which
    none of these modules import, so neither thread waits on a module the other is loading; it
    waits for them when it needs them. An import that fails here fails again where the main
    thread imports the module, and is reported there.
    """

    def load() -> None:
        try:
            for name in READING_AND_PRINTING:
                importlib.import_module(name)
        except Exception:  # reported where the main thread imports it
            return

    threading.Thread(target=load, name="recon-imports", daemon=True).start()


def recon_main(args: argparse.Namespace, inventory_path: Path, *, trust_new_hosts: bool) -> int:
    """Probe, print, and exit 1 if any host could not be probed."""
    try:
        inventory = Inventory.load(inventory_path)
    except SSHError as exc:
        return _fail(str(exc))
    names = [h.strip() for h in args.hosts.split(",") if h.strip()] if args.hosts else None
    names = names or inventory.names()
    for name in names:
        if name not in inventory.hosts:
            return _fail(str(UnknownHostError(name, inventory.names())))
    if args.model_size_gb is not None and args.model_size_gb <= 0:
        return _fail("--model-size-gb must be a positive number of gigabytes")
    err = Console(stderr=True, highlight=False, emoji=False)
    _import_meanwhile()
    world = asyncio.run(_probe(inventory, names, trust_new_hosts, err))
    if args.model_size_gb is not None:
        from tools.checks import GB

        world.set_model_size(round(args.model_size_gb * GB))
    from agent.world.tables import grouping_data, print_tables

    if args.json:
        data = json.loads(world.model_dump_json())
        data["grouping"] = grouping_data(world)  # added next to the per-host facts
        print(json.dumps(data, indent=2, ensure_ascii=False))
    else:
        print_tables(world, screen_console())
        for name, facts in world.hosts.items():
            print(f"{name}: {facts.wall.sentence()}")
    for name, reason in world.unreachable.items():
        err.print(f"[bold red]scout recon: {name} unreachable:[/] {reason}")
    return EXIT_UNREACHABLE if world.unreachable else EXIT_OK


async def _probe(
    inventory: Inventory, names: list[str], trust_new_hosts: bool, err: Console
) -> WorldModel:
    def new_key(host: str, fingerprint: str) -> None:
        err.print(f"[yellow]trusted new host key for {host}: {fingerprint}[/]")

    async with SSHPool(
        inventory,
        trust_new_hosts=trust_new_hosts,
        on_new_host_key=new_key,
        passphrase_prompt=terminal_passphrase_prompt(),
    ) as pool:
        probe_round = await probe_hosts(pool, names)
    from agent.world.model import WorldModel

    world = WorldModel()
    world.apply_round(probe_round.facts, probe_round.failures)
    return world
