"""`ssh_exec`: run one shell command on one host, or on several at once, over the pooled SSH.

A call that runs without a human (the executor says so: `ctx.wall`) runs inside the wall on
each host (tools/wall/), with a scratch folder of its own and TCP only to the ports its words
name on a loopback or inventory address. On a host known to have no wall, only exact read shapes
stay read-only (tools/wall/narrow.py); anything else asks. The wall closes every Unix socket:
docker and the D-Bus clients (systemctl, nmcli, busctl) reach their daemon inside it through a
read-only proxy (tools/wall/host_docker_proxy.py, host_dbus_proxy.py); another daemon's client
(kubectl, crictl) runs unasked only as an exact read shape, outside the wall
(tools/wall/daemons.py); any other use asks.

Each distinct output gets one section in the text the model reads, naming its hosts, with the
exit status (tools/ssh/sections.py); long output is cut to head and tail with the full text
spilled to a file named in the section.
"""

from __future__ import annotations

import asyncio
import re
import time
from typing import TYPE_CHECKING

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from tools.base import RuleShape, Tool, ToolContext, ToolResult
from tools.risk.assessment import Risk, RiskAssessment
from tools.risk.shell_judge import ShellJudge
from tools.ssh.errors import SSHError
from tools.ssh.remote_command import LOCAL_GRACE_S, CommandResult
from tools.ssh.sections import output_digest, render_outcomes
from tools.wall import HostWalls, WallSpec
from tools.wall.daemons import (
    PROXIED_CLIENTS,
    daemon_clients,
    docker_change_verb,
    outside_read,
    process_detail_reader,
    unproxied_client,
)
from tools.wall.dbus_clients import D_BUS_CLIENTS
from tools.wall.denied import denied_line
from tools.wall.limits import proxy_reachable
from tools.wall.narrow import allowed_unwalled
from tools.wall.network import needed_addresses, needed_ports

if TYPE_CHECKING:
    from tools.ssh.pool import SSHPool

MAX_TIMEOUT_S = 3600
WALLED_ONLY = "the operator chose the wall: it runs inside it, unasked, or not at all"
CONNECT_ALLOWANCE_S = 30.0


class SSHExecInput(BaseModel):
    """Run `command` with `sh` on `host`, or on every host in `hosts` at once."""

    model_config = ConfigDict(extra="forbid")

    host: str | None = Field(None, description="One inventory host.")
    hosts: list[str] | None = Field(
        None, min_length=1, description="Several hosts at once (instead of host)."
    )
    command: str = Field(min_length=1, description="Shell command (sh -c).")
    timeout: float = Field(120, gt=0, le=MAX_TIMEOUT_S, description="Seconds; then killed.")
    cwd: str | None = None
    env: dict[str, str] | None = None

    @model_validator(mode="after")
    def _one_target(self) -> SSHExecInput:
        if (self.host is None) == (self.hosts is None):
            raise ValueError("give exactly one of `host` (one name) or `hosts` (a list of names)")
        return self

    @field_validator("env")
    @classmethod
    def _env_names(cls, env: dict[str, str] | None) -> dict[str, str] | None:
        for name in env or {}:
            if not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", name):
                raise ValueError(f"{name!r} is not a valid environment variable name")
        return env

    def targets(self) -> list[str]:
        return [self.host] if self.host is not None else list(dict.fromkeys(self.hosts or []))


class SSHExec(Tool[SSHExecInput]):
    name = "ssh_exec"
    description = (
        "Run a shell command over SSH on one host or several in parallel. Each distinct output "
        "is shown once, naming its hosts and exit status; long output keeps head and tail, the "
        "full text saved to a file it names."
    )
    Input = SSHExecInput
    # A rule may leave out where and how long; the command, an `env` or `cwd` it covers, it
    # names (a rule naming no command would allow any command on its hosts).
    rule_shape = RuleShape(
        open=frozenset({"host", "hosts", "timeout"}),
        defaults={"env": {}, "cwd": ""},
        named=("command",),
        example='ssh_exec(host=spark-*, command="nvidia-smi -pm *")',
    )

    def __init__(
        self,
        pool: SSHPool,
        judge: ShellJudge,
        walls: HostWalls | None = None,
        *,
        walled_only: bool = False,
    ) -> None:
        """`pool`: the session's SSH connections (the tool is only made with an inventory).
        `walled_only`: every command runs inside the wall, unasked, and nowhere else (`scout
        exec --walled`: a person typed it and chose the wall)."""
        self.pool = pool
        self.judge = judge
        self.walls = walls or HostWalls()
        self.walled_only = walled_only

    def risk(self, params: SSHExecInput) -> RiskAssessment:
        """The command's own risk: running it adds nothing, its env and folder can. A read
        the wall cannot answer truly (a daemon's client the wall has no read-only proxy for, a
        reader of other processes' details) asks unless it is an exact shape that runs outside
        the wall; where a host cannot wall
        reads, a read that is not an exact read shape asks. With `walled_only` the person chose
        the wall: whatever it is, it runs inside it."""
        if self.walled_only:
            return RiskAssessment(Risk.READ_ONLY, WALLED_ONLY)
        verdict = self.judge(params.command, env=params.env, cwd=params.cwd)
        if verdict.risk > Risk.READ_ONLY:
            return verdict
        client = unproxied_client(params.command)
        if client is not None and not self._outside_read(params):
            return RiskAssessment(
                Risk.MUTATING,
                f"{client} works through its daemon's socket, which the wall closes; only "
                "docker and D-Bus clients through the wall's read-only proxy for their "
                "daemon and exact daemon read shapes (outside the wall) run unasked, so "
                "this asks",
            )
        verb = docker_change_verb(params.command)
        if verb is not None:
            return RiskAssessment(
                Risk.MUTATING,
                f"docker {verb} is no read: the wall's read-only docker proxy would refuse it, "
                "so this asks",
            )
        proxied = [name for name in daemon_clients(params.command) if name in PROXIED_CLIENTS]
        if proxied:
            for host in params.targets():
                state = self.walls.state(host)
                if state is not None and state.walled and not proxy_reachable(state.detail):
                    return RiskAssessment(
                        Risk.MUTATING,
                        f"{host}'s wall cannot hold {proxied[0]}'s read-only proxy (Landlock "
                        f"ABI < 4 and not root), so {proxied[0]} there asks",
                    )
        reader = process_detail_reader(params.command)
        if reader is not None and not self._outside_read(params):
            return RiskAssessment(
                Risk.MUTATING,
                f"{reader} reads other processes' /proc entries, which the wall hides (its "
                "output would leave them out without a word), so this asks",
            )
        unwalled = self.walls.unwalled(params.targets())
        if not unwalled or self._shape_only(params) or self._outside_read(params):
            return verdict
        host, why = next(iter(unwalled.items()))
        return RiskAssessment(
            Risk.MUTATING,
            f"{host} cannot wall reads ({why}), and there only exact read shapes run unasked",
        )

    def hosts(self, params: SSHExecInput) -> list[str]:
        return params.targets()

    def commands(self, params: SSHExecInput) -> list[tuple[str, str]] | None:
        """The command on each host; None with an env or a folder of its own, which no plan
        action written as a command carries."""
        if params.env or params.cwd:
            return None
        return [(host, params.command) for host in params.targets()]

    def timeout_s(self, params: SSHExecInput) -> float | None:
        return params.timeout + LOCAL_GRACE_S + CONNECT_ALLOWANCE_S

    def summary(self, params: SSHExecInput) -> str:
        return " ".join(params.command.split())[:200]  # the faces show the hosts beside it

    @staticmethod
    def _shape_only(params: SSHExecInput) -> bool:
        """An exact read shape, with no environment or folder of its own (tools/wall/narrow.py)."""
        return params.env is None and params.cwd is None and allowed_unwalled(params.command)

    @staticmethod
    def _outside_read(params: SSHExecInput) -> bool:
        """An exact daemon read shape (tools/wall/daemons.py): it runs outside the wall."""
        return params.env is None and params.cwd is None and outside_read(params.command)

    @staticmethod
    async def _run_on(
        pool: SSHPool, host: str, params: SSHExecInput, wall: WallSpec | None
    ) -> CommandResult:
        return await pool.run(
            host, params.command, timeout=params.timeout, cwd=params.cwd, env=params.env, wall=wall
        )

    async def run(self, params: SSHExecInput, ctx: ToolContext) -> ToolResult:
        pool = self.pool
        targets = params.targets()
        started = time.monotonic()

        async def one(host: str) -> CommandResult | SSHError:
            wall = None
            walled = ctx.wall and not self._outside_read(params)
            why = self.walls.unwalled([host]).get(host)
            if self.walled_only and why is not None:
                return SSHError(f"Not run on {host}: its reads cannot be walled ({why})")
            if (walled or self.walled_only) and why is None:
                ports = needed_ports(params.command, pool.inventory.addresses())
                addresses = needed_addresses(params.command, pool.inventory.address_book())
                docker = "docker" in params.command  # reads its daemon through the proxy
                dbus = any(name in params.command for name in D_BUS_CLIENTS)  # the bus, proxied
                wall = WallSpec(
                    ports=ports, scratch=True, addresses=addresses, docker=docker, dbus=dbus
                )
            try:
                result = await self._run_on(pool, host, params, wall)
                if result.unwalled is None:
                    return result
                self.walls.record(host, False, result.unwalled)
                if self._shape_only(params) and not self.walled_only:  # the narrow mode: now
                    return await self._run_on(pool, host, params, None)
            except SSHError as exc:
                return exc
            return SSHError(
                f"Not run on {host}: its reads cannot be walled ({result.unwalled}). There, "
                "only exact read shapes run unasked; call again and the user is asked."
            )

        outcomes = await asyncio.gather(*(one(host) for host in targets))
        rendered = render_outcomes(
            dict(zip(targets, outcomes, strict=True)), params.timeout, ctx.spill_dir, ctx.redact
        )
        failed = any(
            not isinstance(o, CommandResult) or not o.ok or (o.walled and denied_line(o.stderr))
            for o in outcomes
        )  # a read the wall refused is no answer, whatever it exited with
        meta: dict[str, object] = {
            "hosts": targets,
            "walled": {
                host: isinstance(o, CommandResult) and o.walled
                for host, o in zip(targets, outcomes, strict=True)
            },
            "unwalled": self.walls.unwalled(targets),
            "duration_s": round(time.monotonic() - started, 3),
            "truncated": rendered.truncated,
        }
        if params.host is not None:
            single = outcomes[0]
            meta["exit_status"] = single.exit_status if isinstance(single, CommandResult) else None
            meta["output_digest"] = output_digest(single)
        return ToolResult(
            text=rendered.text, is_error=failed, data={"hosts": rendered.per_host}, meta=meta
        )
