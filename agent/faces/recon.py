"""`scout recon`: the probe pack on every host in parallel, printed as the world model. No LLM.

Start fast: the hosts are asked first, through OpenSSH's own client where it can be told exactly
what Scout's SSH pool does (tools/recon/openssh.py), so the process need not import asyncssh.
`ssh` starts as soon as the inventory is read (tools/recon/ssh_client.py), and the probe's line
is built and sent while it connects; while the hosts run the probe, a thread imports what
reading their answers and printing them needs (the parsers, the facts' models, the checks, the
tables), in time the process would spend waiting. The hosts OpenSSH could not probe as plainly
(a jump host, a key to trust or to unlock, a wall helper to install, ssh's own failure) are then
probed through the pool.
"""

from __future__ import annotations

import argparse
import importlib
import sys
import threading
from collections.abc import Mapping
from pathlib import Path
from types import MappingProxyType
from typing import TYPE_CHECKING, NamedTuple

from agent.faces.process_exit import end_at_once
from tools.recon.ssh_client import start_ssh
from tools.ssh import Inventory, SSHError, UnknownHostError

if TYPE_CHECKING:
    from rich.console import Console

    from tools.recon.openssh import OpenSSHProbe
    from tools.recon.probe import ProbeRound

EXIT_OK, EXIT_UNREACHABLE, EXIT_USAGE = 0, 1, 2
# in the order recon uses them: the probe's answers are parsed first, then printed
READING_AND_PRINTING = ("tools.recon.probe_parse", "agent.world.model", "agent.world.tables")


def usage_failure(message: str) -> int:
    """Say on stderr why recon could not start; its exit status for a request it cannot run."""
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


class StartedRecon(NamedTuple):
    """The hosts being asked, or the problem that stopped recon before any host was asked.

    A NamedTuple, as the inventory's classes are (tools/ssh/inventory.py): recon's start
    imports no dataclasses."""

    inventory: Inventory | None = None
    names: tuple[str, ...] = ()
    probes: Mapping[str, OpenSSHProbe | None] = MappingProxyType({})
    problem: str | None = None

    def stop(self) -> None:
        """Stop asking (the caller failed before the answers were read)."""
        for probe in self.probes.values():
            if probe is not None:
                probe.stop()


def start_recon(args: argparse.Namespace, inventory_path: Path) -> StartedRecon:
    """Check the request, then ask the hosts through OpenSSH where it can (the rest wait for
    the pool, in recon_main). Prints nothing: a caller that fails next stops it and says why."""
    try:
        inventory = Inventory.load(inventory_path)
    except SSHError as exc:
        return StartedRecon(problem=str(exc))
    names = [h.strip() for h in args.hosts.split(",") if h.strip()] if args.hosts else None
    names = names or inventory.names()
    for name in names:
        if name not in inventory.hosts:
            return StartedRecon(problem=str(UnknownHostError(name, inventory.names())))
    if args.model_size_gb is not None and args.model_size_gb <= 0:
        return StartedRecon(problem="--model-size-gb must be a positive number of gigabytes")
    known_hosts = inventory.known_hosts_path
    runs = {name: start_ssh(inventory.get(name), known_hosts) for name in names}
    from tools.recon.openssh import OpenSSHProbe  # the probe's line, built while ssh connects

    probes = {
        name: OpenSSHProbe.send(inventory.get(name), run) if run is not None else None
        for name, run in runs.items()
    }
    _import_meanwhile()
    end_at_once()
    return StartedRecon(inventory, tuple(names), probes)


def recon_main(args: argparse.Namespace, started: StartedRecon, *, trust_new_hosts: bool) -> int:
    """Read the answers (asking the pool for the rest), print, and exit 1 if any host could not
    be probed."""
    if started.problem is not None or started.inventory is None:
        return usage_failure(started.problem or "no inventory")
    probe_round = _probe(started, trust_new_hosts)
    from agent.world.model import WorldModel

    world = WorldModel()
    world.apply_round(probe_round.facts, probe_round.failures)
    if args.model_size_gb is not None:
        from tools.checks import GB

        world.set_model_size(round(args.model_size_gb * GB))
    from agent.world.tables import grouping_data, print_tables

    if args.json:
        import json

        data = json.loads(world.model_dump_json())
        data["grouping"] = grouping_data(world)  # added next to the per-host facts
        print(json.dumps(data, indent=2, ensure_ascii=False))
    else:
        from agent.faces.console import screen_console

        print_tables(world, screen_console())
        for name, facts in world.hosts.items():
            print(f"{name}: {facts.wall.sentence()}")
    err = _stderr_console()
    for name, reason in world.unreachable.items():
        err.print(f"[bold red]scout recon: {name} unreachable:[/] {reason}")
    return EXIT_UNREACHABLE if world.unreachable else EXIT_OK


def _stderr_console() -> Console:
    from rich.console import Console

    return Console(stderr=True, highlight=False, emoji=False)


def _probe(started: StartedRecon, trust_new_hosts: bool) -> ProbeRound:
    """Every host's answer: OpenSSH's where it had one, then the pool's for the rest; the
    round lists the hosts in the order asked."""
    from tools.recon.probe import ProbeRound

    assert started.inventory is not None
    answered = ProbeRound()
    for name, probe in started.probes.items():
        try:
            outcome = probe.facts() if probe is not None else None
        except Exception as exc:  # reported as the pool's probe reports it (ProbeRound.record)
            outcome = exc
        if outcome is not None:
            answered.record(name, outcome)
    rest = [name for name in started.names if name not in {*answered.facts, *answered.failures}]
    if rest:
        import asyncio

        pooled = asyncio.run(_probe_with_pool(started.inventory, rest, trust_new_hosts))
        answered.facts |= pooled.facts
        answered.failures |= pooled.failures
    facts, failures = answered.facts, answered.failures
    return ProbeRound(
        {name: facts[name] for name in started.names if name in facts},
        {name: failures[name] for name in started.names if name in failures},
    )


async def _probe_with_pool(
    inventory: Inventory, names: list[str], trust_new_hosts: bool
) -> ProbeRound:
    from agent.faces.passphrase_prompt import terminal_passphrase_prompt
    from tools.recon.probe import probe_hosts
    from tools.ssh import SSHPool

    err = _stderr_console()

    def new_key(host: str, fingerprint: str) -> None:
        err.print(f"[yellow]trusted new host key for {host}: {fingerprint}[/]")

    async with SSHPool(
        inventory,
        trust_new_hosts=trust_new_hosts,
        on_new_host_key=new_key,
        passphrase_prompt=terminal_passphrase_prompt(),
    ) as pool:
        return await probe_hosts(pool, names)
