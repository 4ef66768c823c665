"""`scout doctor`: check what Scout needs without changing anything, and say how to fix what fails.

Checks the settings, the API key, the inventory, known_hosts, SSH reachability of every host and
Docker access on each. Only read-only commands run on the hosts.
"""

from __future__ import annotations

import asyncio
import re
from dataclasses import dataclass
from pathlib import Path

from rich.console import Console
from rich.table import Table
from rich.text import Text

from agent.faces.passphrase_prompt import terminal_passphrase_prompt
from agent.faces.wording import plural
from agent.runtime.settings import Settings, SettingsError, settings_path
from tools.recon.parsers import docker_access_problem
from tools.ssh import AuthError, HostKeyError, HostSpec, Inventory, SSHError, SSHPool
from tools.wall import WallSpec
from tools.wall.limits import described_coverage
from tools.wall.network import RAY_GCS_PORT


@dataclass
class Check:
    name: str
    ok: bool
    detail: str
    fix: str = ""


def check_settings_file() -> Check:
    """Which settings file was read: the one Scout uses may not be the one just edited."""
    path = settings_path()
    if path.is_file():
        return Check("settings", True, f"loaded {path}")
    return Check("settings", True, f"no file at {path}: defaults, SCOUT_* variables and flags")


def check_rules(settings: Settings) -> Check:
    """The settings' rules, read as a session reads them: one it would refuse fails here."""
    from agent.runtime.settings_rules import settings_rules

    try:
        rules = settings_rules(settings.rules)
    except SettingsError as exc:
        return Check("rules", False, str(exc), 'fix the rule (README: "Rule patterns")')
    return Check("rules", True, f"{plural(len(rules.rules), 'rule')} read as a session reads them")


def check_api_key(settings: Settings) -> Check:
    if settings.api_key is None and settings.base_url:
        return Check(
            "API key",
            True,
            f"none: {settings.base_url} is asked without one (a server started without "
            "--api-key); set ANTHROPIC_API_KEY if it has one",
        )
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


def check_known_hosts(inventory: Inventory) -> Check:
    known = inventory.known_hosts_path
    if known.is_file():
        keys = sum(1 for line in known.read_text().splitlines() if line.strip()[:1] not in "#")
        return Check("known_hosts", True, f"{known}: {plural(keys, 'host key')} recorded")
    return Check(
        "known_hosts",
        False,
        f"{known} does not exist. Scout verifies every host's key against this file and refuses "
        "a host it cannot verify, so no host can be reached yet",
        f"ssh-keyscan each host into {known} (check the fingerprints), or let `scout recon "
        "--trust-new-hosts` record them on first contact",
    )


def check_identity(spec: HostSpec) -> Check | None:
    """A missing private key, said as such (the connection would only report a failed login)."""
    key = spec.identity_file
    if key is None or key.is_file():
        return None
    return Check(
        f"{spec.name}: ssh",
        False,
        f"identity file {key} does not exist",
        f"set identity_file in the inventory to your private key, or create one: "
        f"ssh-keygen -t ed25519 -f {key} && ssh-copy-id -i {key} {spec.user}@{spec.address}",
    )


async def check_host(pool: SSHPool, host: str) -> list[Check]:
    try:
        result = await pool.run(host, "true", timeout=15)
    except SSHError as exc:
        return [Check(f"{host}: ssh", False, str(exc), _ssh_fix(exc))]
    if result.exit_status != 0:
        return [Check(f"{host}: ssh", False, f"`true` exited {result.exit_status}")]
    checks = [Check(f"{host}: ssh", True, f"reachable, command ran in {result.duration_s:.2f} s")]
    docker = await pool.run(host, "docker info", timeout=20)
    checks.append(docker_check(host, docker.exit_status, docker.stdout + docker.stderr))
    checks.append(await wall_check(pool, host))
    return checks


async def wall_check(pool: SSHPool, host: str) -> Check:
    """Whether reads run inside the wall there (leaves Scout's helper in ~/.scout if missing)."""
    # a port named, so the address filter is tried too (it says whether it was built)
    wall = WallSpec(ports=(RAY_GCS_PORT,))
    result = await pool.run(host, 'echo "$SCOUT_WALL"', timeout=20, wall=wall)
    name = f"{host}: wall"
    if result.unwalled is not None:
        detail = f"reads are not walled: {result.unwalled}; only exact read shapes run unasked"
        return Check(name, True, detail)
    if not result.ok:
        said = (result.stderr or result.stdout).strip()[:200] or f"exit {result.exit_status}"
        return Check(name, False, f"the wall could not be tried: {said}", "check `sh` and $HOME")
    parts = result.stdout.strip()
    gaps = [c.kind for c in described_coverage(parts) if not c.stopped]
    detail = f"reads run inside the wall ({parts}); not stopped there: {', '.join(gaps)}"
    return Check(name, True, detail)


def docker_check(host: str, exit_status: int | None, output: str) -> Check:
    """Docker's version and runtimes from `docker info`, or why Docker cannot be used."""
    text = output.strip()
    name = f"{host}: docker"
    if exit_status == 0:
        version = _info_field(text, "Server Version")
        runtimes = _info_field(text, "Runtimes")
        if version is None:
            return Check(name, False, "`docker info` shows no server", "start the Docker daemon")
        detail = f"Docker {version} answers" + (f"; runtimes: {runtimes}" if runtimes else "")
        return Check(name, True, detail)
    access = docker_access_problem(text, exit_status)
    if access is not None and access.kind == "permission_denied":
        return Check(
            name,
            False,
            "permission denied on the Docker socket",
            "sudo usermod -aG docker $USER on the host, then log in again",
        )
    if access is not None and access.kind == "not_installed":
        return Check(name, False, "docker is not installed", "install Docker")
    errors = [line for line in text.splitlines() if "error" in line.lower()]
    first = (errors or text.splitlines() or [f"exit {exit_status}"])[0].strip()
    return Check(name, False, first, "start the Docker daemon, then retry")


def _info_field(text: str, field: str) -> str | None:
    match = re.search(rf"^\s*{field}:\s*(.+)$", text, re.MULTILINE)
    return match.group(1).strip() if match else None


def _ssh_fix(exc: SSHError) -> str:
    if isinstance(exc, HostKeyError):
        return (
            "compare the fingerprint with the host's own key, then ssh-keyscan it into "
            "known_hosts (or let `scout recon --trust-new-hosts` record it)"
        )
    if isinstance(exc, AuthError):
        return "check user and identity_file in the inventory; ssh-copy-id the public key"
    return "check the address and port, and that sshd runs (the jump host too)"


async def run_checks(settings: Settings, inventory_path: Path | None) -> list[Check]:
    checks = [check_settings_file(), check_rules(settings), check_api_key(settings)]
    if inventory_path is None:
        checks.append(Check("inventory", False, "no inventory given", "scout init, then edit it"))
        return checks
    try:
        inventory = Inventory.load(inventory_path)
    except (SSHError, OSError) as exc:
        checks.append(Check("inventory", False, str(exc), "fix the file (scout init has a sample)"))
        return checks
    hosts = plural(len(inventory.hosts), "host")
    checks.append(Check("inventory", True, f"{hosts} from {inventory_path}"))
    checks.append(check_known_hosts(inventory))
    keyless = {spec.name: check_identity(spec) for spec in inventory.hosts.values()}
    prompt = terminal_passphrase_prompt()
    async with SSHPool(inventory, connect_attempts=1, passphrase_prompt=prompt) as pool:
        per_host = await asyncio.gather(
            *(_host_or_key(pool, name, keyless[name]) for name in inventory.names())
        )
    for host_checks in per_host:
        checks.extend(host_checks)
    return checks


async def _host_or_key(pool: SSHPool, name: str, missing_key: Check | None) -> list[Check]:
    return [missing_key] if missing_key is not None else await check_host(pool, name)


def print_checks(console: Console, checks: list[Check]) -> None:
    table = Table(title="scout doctor", show_lines=False)
    table.add_column("check", no_wrap=True)
    table.add_column("result")
    table.add_column("how to fix")
    for check in checks:
        mark = Text("ok", style="green") if check.ok else Text("FAIL", style="bold red")
        table.add_row(check.name, Text.assemble(mark, " ", check.detail), check.fix)
    console.print(table)
