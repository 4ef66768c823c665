"""What a `docker_ctl` call may ask for: one flat input, checked per action before anything runs.

Names, image references and option values are validated here so a bad value is refused with a
message the model can act on; values are still shell-quoted when the command is built.
"""

from __future__ import annotations

import re
import shlex
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

Action = Literal[
    "ps", "images", "inspect", "logs", "stats", "pull", "run", "exec", "start", "stop",
    "restart", "rm", "rmi",
]  # fmt: skip
MAX_DEADLINE_S = 3600

CONTAINER_REF = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]*")
IMAGE_REF = re.compile(r"[A-Za-z0-9][A-Za-z0-9._/:@-]*")
ENV_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
ULIMIT_NAME = re.compile(r"[a-z]+")
ULIMIT_VALUE = re.compile(r"-?\d+(:-?\d+)?")

# Which optional fields each action reads; any other field set on a call is refused.
ACTION_FIELDS: dict[str, frozenset[str]] = {
    "ps": frozenset({"all"}),
    "images": frozenset(),
    "inspect": frozenset({"container", "image"}),
    "logs": frozenset({"container", "tail", "since"}),
    "stats": frozenset({"container"}),
    "pull": frozenset({"image"}),
    "run": frozenset(
        {
            "image",
            "name",
            "command",
            "env",
            "volumes",
            "ports",
            "network",
            "ipc",
            "gpus",
            "devices",
            "ulimits",
            "shm_size",
            "restart_policy",
            "detach",
            "entrypoint",
            "privileged",
            "labels",
            "auto_remove",
            "pull",
            "user",
            "workdir",
        }
    ),
    "exec": frozenset({"container", "command", "user", "workdir", "env"}),
    "start": frozenset({"container"}),
    "stop": frozenset({"container", "timeout"}),
    "restart": frozenset({"container", "timeout"}),
    "rm": frozenset({"container", "force", "remove_volumes"}),
    "rmi": frozenset({"image", "force"}),
}
REQUIRED_FIELDS: dict[str, tuple[str, ...]] = {
    "logs": ("container",),
    "pull": ("image",),
    "run": ("image",),
    "exec": ("container", "command"),
    "start": ("container",),
    "stop": ("container",),
    "restart": ("container",),
    "rm": ("container",),
    "rmi": ("image",),
}
ALWAYS_ALLOWED = frozenset({"host", "action", "deadline_s"})


class DockerCtlInput(BaseModel):
    """One Docker action on one inventory host."""

    model_config = ConfigDict(extra="forbid")

    host: str = Field(min_length=1)
    action: Action
    container: str | None = Field(
        None, description="inspect, logs, stats, exec, start, stop, restart, rm: name or ID."
    )
    image: str | None = Field(None, description="run, pull, rmi, inspect: image reference.")
    name: str | None = Field(None, description="run: container name.")
    command: list[str] | str | None = Field(
        None,
        description="run, exec: argv list, or a string split as a shell would (pipes: "
        '["sh", "-c", "..."]).',
    )
    env: dict[str, str] | None = Field(None, description="run, exec.")
    volumes: list[str] | None = Field(None, description='run: "src:dst[:ro]".')
    ports: list[str] | None = Field(None, description='run: "8000:8000".')
    network: str | None = Field(None, description="run: host, none or a network.")
    ipc: str | None = Field(None, description="run: e.g. host.")
    gpus: str | None = Field(None, description='run: e.g. "all".')
    devices: list[str] | None = Field(None, description="run: e.g. /dev/infiniband.")
    ulimits: dict[str, str] | None = Field(
        None, description='run: e.g. {"memlock": "-1"}; values "soft[:hard]".'
    )
    shm_size: str | None = Field(None, description='run: e.g. "16g".')
    restart_policy: str | None = Field(None, description="run: no, always, unless-stopped.")
    detach: bool = Field(True, description="run: in the background.")
    auto_remove: bool = Field(False, description="run: remove it when it exits.")
    pull: Literal["missing", "always", "never"] | None = Field(None, description="run.")
    entrypoint: str | None = Field(None, description="run.")
    privileged: bool = Field(False, description="run: all host privileges.")
    labels: dict[str, str] | None = Field(None, description="run.")
    user: str | None = Field(None, description="run, exec: user[:group].")
    workdir: str | None = Field(None, description="run, exec.")
    tail: int = Field(200, ge=0, le=100_000, description="logs: last N lines.")
    since: str | None = Field(None, description='logs: e.g. "10m" or an RFC 3339 time.')
    all: bool = Field(True, description="ps: include stopped containers.")
    timeout: int | None = Field(
        None, ge=0, le=3600, description="stop, restart: seconds before it is killed."
    )
    force: bool = Field(False, description="rm: kill a running one first; rmi: force.")
    remove_volumes: bool = Field(False, description="rm: its anonymous volumes too.")
    deadline_s: float | None = Field(
        None,
        gt=0,
        le=MAX_DEADLINE_S,
        description="Seconds before the command is killed (default 1800 for pull, run; else 120).",
    )

    @field_validator("container", "name")
    @classmethod
    def _container_ref(cls, value: str | None) -> str | None:
        if value is not None and not CONTAINER_REF.fullmatch(value):
            raise ValueError(
                f"{value!r} is not a container name or ID: use letters, digits, '_', '.', '-', "
                "starting with a letter or digit"
            )
        return value

    @field_validator("image")
    @classmethod
    def _image_ref(cls, value: str | None) -> str | None:
        if value is not None and not IMAGE_REF.fullmatch(value):
            raise ValueError(
                f"{value!r} is not an image reference like 'vllm/vllm-openai:v0.11.0' or "
                "'nvcr.io/nvidia/pytorch:25.09-py3'"
            )
        return value

    @field_validator("env")
    @classmethod
    def _env_names(cls, env: dict[str, str] | None) -> dict[str, str] | None:
        for name in env or {}:
            if not ENV_NAME.fullmatch(name):
                raise ValueError(f"{name!r} is not a valid environment variable name")
        return env

    @field_validator("ulimits")
    @classmethod
    def _ulimits(cls, ulimits: dict[str, str] | None) -> dict[str, str] | None:
        for name, value in (ulimits or {}).items():
            if not ULIMIT_NAME.fullmatch(name) or not ULIMIT_VALUE.fullmatch(value):
                raise ValueError(
                    f"ulimit {name}={value!r} is not valid: use a lowercase name and "
                    '"soft" or "soft:hard" numbers, e.g. {"memlock": "-1"}'
                )
        return ulimits

    @field_validator("labels")
    @classmethod
    def _labels(cls, labels: dict[str, str] | None) -> dict[str, str] | None:
        for key in labels or {}:
            if not key or "=" in key or key != key.strip():
                raise ValueError(f"label key {key!r} must be non-empty, without '=' or spaces")
        return labels

    @field_validator("command")
    @classmethod
    def _command(cls, command: list[str] | str | None) -> list[str] | str | None:
        if isinstance(command, str):
            try:
                words = shlex.split(command)
            except ValueError as exc:
                raise ValueError(f"cannot split command {command!r}: {exc}") from None
            if not words:
                raise ValueError("command is empty")
        elif command is not None and not command:
            raise ValueError("command is an empty list")
        return command

    @model_validator(mode="after")
    def _fields_fit_action(self) -> DockerCtlInput:
        missing = [
            name for name in REQUIRED_FIELDS.get(self.action, ()) if getattr(self, name) is None
        ]
        if missing:
            raise ValueError(f"action {self.action!r} needs {', '.join(missing)}")
        allowed = ACTION_FIELDS[self.action] | ALWAYS_ALLOWED
        stray = sorted(self.model_fields_set - allowed)
        if stray:
            raise ValueError(
                f"{', '.join(stray)} do(es) not apply to action {self.action!r}; "
                f"it reads: {', '.join(sorted(ACTION_FIELDS[self.action])) or 'nothing more'}"
            )
        if self.action == "inspect" and (self.container is None) == (self.image is None):
            raise ValueError("inspect needs exactly one of container or image")
        return self

    def argv(self) -> list[str]:
        """The command for run/exec as an argv list ([] when none was given)."""
        if isinstance(self.command, str):
            return shlex.split(self.command)
        return list(self.command or [])
