"""`scout doctor`: check what Scout needs without changing anything, and say how to fix what fails.

Checks the settings, the API key, the inventory, known_hosts, SSH reachability of every host and
Docker access on each. Only read-only commands run on the hosts.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from pathlib import Path

from rich.console import Console
from rich.table import Table
from rich.text import Text

from agent.runtime.settings import Settings
from tools.recon.parsers import docker_access_problem
from tools.ssh import Inventory, SSHError, SSHPool


@dataclass
class Check:
    name: str
    ok: bool
    detail: str
    fix: str = ""


def check_api_key(settings: Settings) -> Check:
    if settings.api_key is None:
        return Check(
            "API key",
            False,
            "ANTHROPIC_API_KEY is not set",
            "export ANTHROPIC_API_KEY=…  (scout demo and scout recon need none)",
        )
    key = settings.api_key.get_secret_value()
    shape = "looks like an Anthropic key" if key.startswith("sk-ant-") else "set (unusual format)"
    where = f" for {settings.base_url}" if settings.base_url else ""
    return Check("API key", True, f"{shape}{where}")


async def check_host(pool: SSHPool, host: str) -> list[Check]:
    try:
        result = await pool.run(host, "true", timeout=15)
    except SSHError as exc:
        return [Check(f"{host}: ssh", False, str(exc), _ssh_fix(str(exc)))]
    if result.exit_status != 0:
        return [Check(f"{host}: ssh", False, f"`true` exited {result.exit_status}")]
    checks = [Check(f"{host}: ssh", True, f"reachable, command ran in {result.duration_s:.2f} s")]
    docker = await pool.run(host, "docker info --format '{{.ServerVersion}}'", timeout=20)
    text = (docker.stdout + docker.stderr).strip()
    access = docker_access_problem(text, docker.exit_status)
    if docker.exit_status == 0:
        checks.append(Check(f"{host}: docker", True, f"server {text.splitlines()[-1]}"))
    elif access is not None and access.kind == "permission_denied":
        checks.append(
            Check(
                f"{host}: docker",
                False,
                "permission denied on the Docker socket",
                "sudo usermod -aG docker $USER on the host, then log in again",
            )
        )
    elif access is not None and access.kind == "not_installed":
        checks.append(Check(f"{host}: docker", False, "docker is not installed", "install Docker"))
    else:
        first = text.splitlines()[0] if text else f"exit {docker.exit_status}"
        checks.append(Check(f"{host}: docker", False, first, "start the Docker daemon, then retry"))
    return checks


def _ssh_fix(message: str) -> str:
    lowered = message.lower()
    if "host key" in lowered:
        return "verify the key, then ssh-keyscan it into known_hosts or use --trust-new-hosts"
    if "permission denied" in lowered or "login" in lowered:
        return "check user and identity_file in the inventory; ssh-copy-id the public key"
    return "check the address and port, and that sshd runs (the jump host too)"


async def run_checks(settings: Settings, inventory_path: Path | None) -> list[Check]:
    checks = [Check("settings", True, "loaded"), check_api_key(settings)]
    if inventory_path is None:
        checks.append(Check("inventory", False, "no inventory given", "scout init, then edit it"))
        return checks
    try:
        inventory = Inventory.load(inventory_path)
    except (SSHError, OSError) as exc:
        checks.append(Check("inventory", False, str(exc), "fix the file (scout init has a sample)"))
        return checks
    checks.append(Check("inventory", True, f"{len(inventory.hosts)} hosts from {inventory_path}"))
    known = inventory.known_hosts_path
    checks.append(
        Check("known_hosts", known.is_file(), str(known), "" if known.is_file() else "ssh-keyscan")
    )
    async with SSHPool(inventory, connect_attempts=1) as pool:
        per_host = await asyncio.gather(*(check_host(pool, name) for name in inventory.names()))
    for host_checks in per_host:
        checks.extend(host_checks)
    return checks


def print_checks(console: Console, checks: list[Check]) -> None:
    table = Table(title="scout doctor", show_lines=False)
    table.add_column("check", no_wrap=True)
    table.add_column("result")
    table.add_column("how to fix")
    for check in checks:
        mark = Text("ok", style="green") if check.ok else Text("FAIL", style="bold red")
        table.add_row(check.name, Text.assemble(mark, " ", check.detail), check.fix)
    console.print(table)
