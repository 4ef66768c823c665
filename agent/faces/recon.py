"""`scout recon`: the probe pack on every host in parallel, printed as the world model. No LLM."""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
from pathlib import Path

from rich.console import Console

from agent.faces.console import screen_console
from agent.faces.passphrase_prompt import terminal_passphrase_prompt
from agent.world.model import WorldModel
from agent.world.tables import grouping_data, print_tables
from tools.checks import GB
from tools.recon.probe import probe_hosts
from tools.ssh import Inventory, SSHError, SSHPool, UnknownHostError

EXIT_OK, EXIT_UNREACHABLE, EXIT_USAGE = 0, 1, 2


def _fail(message: str) -> int:
    print(f"scout recon: {message}", file=sys.stderr)
    return EXIT_USAGE


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
    world = asyncio.run(_probe(inventory, names, trust_new_hosts, err))
    if args.model_size_gb is not None:
        world.set_model_size(round(args.model_size_gb * GB))
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

    world = WorldModel()
    async with SSHPool(
        inventory,
        trust_new_hosts=trust_new_hosts,
        on_new_host_key=new_key,
        passphrase_prompt=terminal_passphrase_prompt(),
    ) as pool:
        probe_round = await probe_hosts(pool, names)
    world.apply_round(probe_round.facts, probe_round.failures)
    return world
