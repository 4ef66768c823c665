"""`docker_ctl`: Docker on one host over its pooled SSH connection, with typed rows for the world.

Each call builds one quoted docker CLI command (tools.docker.commands), runs it once on the host,
and answers with compact text for the model plus rows in `data` under stable keys
(`containers`, `images`, `container`, `image`, `stats`, `host`). After a change, or a failure
about a container or an image, the listing is fetched again so the error can name what does
exist; every listing the call made goes to the world model as typed facts (`ctx.world`). Known
failures are explained with their fix.
"""

from __future__ import annotations

import asyncio
import time
from typing import Any

from tools.base import RuleShape, Tool, ToolContext, ToolResult
from tools.docker.commands import IMAGES_COMMAND, PS_COMMAND, build_command, display_command
from tools.docker.failures import FailureKind, classify_failure, explain_failure
from tools.docker.params import DockerCtlInput
from tools.docker.render import (
    container_facts,
    containers_table,
    image_facts,
    images_table,
    stats_table,
)
from tools.docker.risk import docker_call_risk
from tools.docker.world_facts import refresh_world
from tools.recon.parsers.docker_inspect import parse_container_inspect, parse_image_inspect
from tools.recon.parsers.docker_rows import (
    DockerContainer,
    DockerImage,
    parse_docker_images_json,
    parse_docker_ps_json,
    parse_docker_stats_json,
)
from tools.recon.parsers.errors import ParseError
from tools.risk.assessment import RiskAssessment
from tools.risk.shell_judge import ShellJudge
from tools.ssh.errors import SSHError
from tools.ssh.pool import SSHPool
from tools.ssh.remote_command import LOCAL_GRACE_S, CommandResult
from tools.text.bounded import bound_text

LONG_ACTIONS = frozenset({"pull", "run"})
LONG_DEADLINE_S = 1800.0
DEFAULT_DEADLINE_S = 120.0
REFRESH_DEADLINE_S = 30.0
CONNECT_ALLOWANCE_S = 30.0
CHANGES_CONTAINERS = frozenset({"run", "start", "stop", "restart", "rm"})
CHANGES_IMAGES = frozenset({"pull", "rmi", "run"})
PAST_TENSE = {"start": "started", "stop": "stopped", "restart": "restarted", "rm": "removed"}


def deadline_for(params: DockerCtlInput) -> float:
    """How long the docker command may run on the host before it is killed."""
    if params.deadline_s is not None:
        return params.deadline_s
    base = LONG_DEADLINE_S if params.action in LONG_ACTIONS else DEFAULT_DEADLINE_S
    if params.action == "run" and not params.detach:
        return base
    return base + (params.timeout or 0)


class DockerCtl(Tool[DockerCtlInput]):
    name = "docker_ctl"
    description = (
        "Docker on one host over SSH; each field names the actions that read it. Returns a "
        "table or facts (after a change, the fresh container list); known failures come with "
        "their fix."
    )
    Input = DockerCtlInput
    # A rule names the action and every flag the call sets; it may leave out how long and how
    # much is shown, and flags left at their defaults.
    rule_shape = RuleShape(
        open=frozenset({"host", "deadline_s", "timeout", "tail", "since", "all"}),
        defaults={
            "detach": True,
            "auto_remove": False,
            "privileged": False,
            "force": False,
            "remove_volumes": False,
        },
        required=("action",),
        example="docker_ctl(host=spark-a, action=restart, container=vllm_node)",
    )

    def __init__(self, pool: SSHPool, judge: ShellJudge) -> None:
        """`pool`: the session's SSH connections (the tool is only made with an inventory)."""
        self.pool = pool
        self.judge = judge

    def risk(self, params: DockerCtlInput) -> RiskAssessment:
        """The action, every flag, and the command it runs (by the shell judge)."""
        return docker_call_risk(params, self.judge)

    def hosts(self, params: DockerCtlInput) -> list[str]:
        return [params.host]

    def commands(self, params: DockerCtlInput) -> list[tuple[str, str]] | None:
        return [(params.host, build_command(params))]

    def timeout_s(self, params: DockerCtlInput) -> float | None:
        return deadline_for(params) + LOCAL_GRACE_S + CONNECT_ALLOWANCE_S + REFRESH_DEADLINE_S

    def summary(self, params: DockerCtlInput) -> str:
        return display_command(params)[:200]  # the faces show the host beside it

    async def run(self, params: DockerCtlInput, ctx: ToolContext) -> ToolResult:
        call = _DockerCall(params, ctx, self.pool)
        result = await call.run()
        if ctx.world is not None:
            for name in call.created(result):
                ctx.world.record_created(params.host, name, f"docker_ctl: {call.shown[:120]}")
            refresh_world(
                ctx.world,
                params.host,
                call.containers,
                call.images,
                command=call.shown,
                exit_status=result.meta.get("exit_status"),
            )
        return result


class _DockerCall:
    """One docker_ctl call: run the command, then read, refresh and explain what it did."""

    def __init__(self, params: DockerCtlInput, ctx: ToolContext, pool: SSHPool) -> None:
        self.params = params
        self.ctx = ctx
        self.pool = pool
        self.host = params.host
        self.shown = display_command(params)
        self.started = time.monotonic()
        self.truncated = False
        self.containers: list[DockerContainer] | None = None  # as listed by this call
        self.images: list[DockerImage] | None = None

    def created(self, result: ToolResult) -> list[str]:
        """The names of the container a successful `run` created (its own name, or the one
        Docker gave it, from the listing after it)."""
        if self.params.action != "run" or result.is_error:
            return []
        if self.params.name:
            return [self.params.name]
        container_id = str(result.data.get("container_id") or "")
        rows = self.containers or []
        return [n for c in rows if container_id and (c.id or "").startswith(container_id)
                for n in c.names[:1]]  # fmt: skip

    async def run(self) -> ToolResult:
        command = build_command(self.params)
        if self.params.action == "logs":
            command += " 2>&1"  # the container's stdout and stderr, interleaved as written
        deadline = deadline_for(self.params)
        try:
            result = await self.pool.run(self.host, command, timeout=deadline)
        except SSHError as exc:
            return self._result(
                f"docker {self.params.action} did not run on {self.host}: {exc}", None, True, {}
            )
        if result.timed_out:
            more = "; raise deadline_s if it needs longer" if deadline < 3600 else ""
            text = (
                f"docker {self.params.action} did not finish in {deadline:g} s and was killed on "
                f"{self.host}{more}. Partial output:\n{self._bounded(_combined(result), 'out')}"
            )
            return self._result(text, result, True, {})
        if not result.ok:
            return await self._failed(result)
        try:
            return await self._succeeded(result)
        except ParseError as exc:
            return self._result(
                f"docker {self.params.action} ran on {self.host} but its output could not be "
                f"read: {exc}",
                result,
                True,
                {},
            )

    async def _failed(self, result: CommandResult) -> ToolResult:
        params = self.params
        output = _combined(result)
        failure = classify_failure(output, result.exit_status, params)
        if failure is None:
            data = await self._refresh(params.action in CHANGES_CONTAINERS, False)
            if params.action == "exec":
                text = (
                    f"the command in {params.container} exited with status {result.exit_status}:"
                    f"\n{self._bounded(output, 'exec') or '(no output)'}"
                )
            else:
                text = (
                    f"docker {params.action} failed on {self.host} (exit {result.exit_status}):\n"
                    f"{self._bounded(output, 'error') or '(no output)'}"
                )
            return self._result(text, result, True, data)
        about_containers = failure.kind in (FailureKind.NO_CONTAINER, FailureKind.NAME_IN_USE)
        data = await self._refresh(about_containers, failure.kind == FailureKind.IMAGE_MISSING)
        text = explain_failure(
            failure,
            self.host,
            params,
            container_names=[n for c in self.containers or [] for n in c.names],
            image_refs=[i.reference for i in self.images or []],
        )
        data["failure"] = {"kind": failure.kind.name.lower(), "subject": failure.subject}
        return self._result(text, result, True, data)

    async def _succeeded(self, result: CommandResult) -> ToolResult:
        params, out = self.params, result.stdout
        match params.action:
            case "ps":
                self.containers = parse_docker_ps_json(out)
                data = {"containers": [c.model_dump() for c in self.containers]}
                return self._result(containers_table(self.containers), result, False, data)
            case "images":
                self.images = parse_docker_images_json(out)
                data = {"images": [i.model_dump() for i in self.images]}
                return self._result(images_table(self.images), result, False, data)
            case "inspect" if params.container is not None:
                container = parse_container_inspect(out)
                text = container_facts(container)
                return self._result(text, result, False, {"container": container.model_dump()})
            case "inspect":
                image = parse_image_inspect(out)
                return self._result(
                    image_facts(image), result, False, {"image": image.model_dump()}
                )
            case "stats":
                stats = parse_docker_stats_json(out)
                data = {"stats": [s.model_dump() for s in stats]}
                return self._result(stats_table(stats), result, False, data)
            case "logs" | "exec":
                text = self._bounded(_combined(result), params.action) or "(no output)"
                return self._result(text, result)
        return await self._changed(result)

    async def _changed(self, result: CommandResult) -> ToolResult:
        """pull, run, start, stop, restart, rm, rmi: say what changed and show the fresh rows."""
        params = self.params
        data = await self._refresh(
            params.action in CHANGES_CONTAINERS, params.action in CHANGES_IMAGES
        )
        rows = self.containers or []
        if params.action == "run" and params.detach:
            container_id = result.stdout.strip().splitlines()[-1] if result.stdout.strip() else ""
            mine = [c for c in rows if c.id and container_id and c.id.startswith(container_id)]
            label = params.name or container_id[:12]
            text = f"started container {label} ({container_id[:12]}) from {params.image}"
            text += f"\n{containers_table(mine)}" if mine else ""
            data["container_id"] = container_id
        elif params.action == "run":
            text = self._bounded(_combined(result), "run") or "(no output)"
        elif params.action in PAST_TENSE:
            target = str(params.container)
            mine = [c for c in rows if target in c.names or (c.id or "").startswith(target)]
            text = f"{PAST_TENSE[params.action]} {target}"
            text += f"\n{containers_table(mine)}" if mine else f"; {len(rows)} container(s) left"
        elif params.action == "pull":
            text = f"pulled {params.image}: {result.stdout.strip()}"
        else:
            text = f"removed image {params.image}\n{self._bounded(result.stdout, 'rmi')}".rstrip()
        return self._result(text, result, False, data)

    async def _refresh(self, containers: bool, images: bool) -> dict[str, Any]:
        """The host's container and/or image rows now; a listing that fails is left out."""
        listings = (("containers", PS_COMMAND, containers), ("images", IMAGES_COMMAND, images))
        wanted = [(key, command) for key, command, on in listings if on]
        outcomes = await asyncio.gather(*(self._quiet_run(cmd) for _, cmd in wanted))
        data: dict[str, Any] = {}
        for (key, _), output in zip(wanted, outcomes, strict=True):
            if output is None:
                continue
            try:
                if key == "containers":
                    self.containers = parse_docker_ps_json(output)
                    data[key] = [c.model_dump() for c in self.containers]
                else:
                    self.images = parse_docker_images_json(output)
                    data[key] = [i.model_dump() for i in self.images]
            except ParseError:
                continue
        return data

    async def _quiet_run(self, command: str) -> str | None:
        try:
            result = await self.pool.run(self.host, command, timeout=REFRESH_DEADLINE_S)
        except SSHError:
            return None
        return result.stdout if result.ok else None

    def _bounded(self, text: str, part: str) -> str:
        bounded = bound_text(
            text.rstrip("\n"),
            spill_dir=self.ctx.spill_dir,
            label=f"docker_ctl-{self.host}-{self.params.action}-{part}",
            redact=self.ctx.redact,
        )
        self.truncated = self.truncated or bounded.truncated
        return bounded.text

    def _result(
        self,
        text: str,
        result: CommandResult | None,
        is_error: bool = False,
        data: dict[str, Any] | None = None,
    ) -> ToolResult:
        meta = {
            "host": self.host,
            "action": self.params.action,
            "command": self.shown,
            "exit_status": result.exit_status if result else None,
            "duration_s": round(time.monotonic() - self.started, 3),
            "truncated": self.truncated,
        }
        return ToolResult(
            text=f"[{self.host}] $ {self.shown}\n{text}",
            is_error=is_error,
            data={"host": self.host, **(data or {})},
            meta=meta,
        )


def _combined(result: CommandResult) -> str:
    return "\n".join(part.rstrip("\n") for part in (result.stdout, result.stderr) if part.strip())
