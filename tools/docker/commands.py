"""Docker CLI command lines for each action, every value shell-quoted.

Options are written as `--flag=value` so a value can never be read as another option; the
positional container and image were validated by `DockerCtlInput`. `display_command` is the same
line with secret-looking environment values masked, for the text the model and transcript see.
"""

from __future__ import annotations

import shlex

from tools.docker.params import DockerCtlInput
from tools.recon.parsers.env_secrets import MASK, is_secret_name

JSON_FORMAT = "--format={{json .}}"
PS_COMMAND = f"docker ps -a --no-trunc {shlex.quote(JSON_FORMAT)}"
IMAGES_COMMAND = f"docker images --no-trunc {shlex.quote(JSON_FORMAT)}"


def build_command(params: DockerCtlInput, *, mask_secrets: bool = False) -> str:
    """The shell command line that performs `params.action` on the host."""
    words = _words(params, mask_secrets)
    return " ".join(shlex.quote(word) for word in words)


def display_command(params: DockerCtlInput) -> str:
    return build_command(params, mask_secrets=True)


def _env_words(env: dict[str, str] | None, mask_secrets: bool) -> list[str]:
    return [
        f"--env={name}={MASK if mask_secrets and is_secret_name(name) else value}"
        for name, value in (env or {}).items()
    ]


def _words(p: DockerCtlInput, mask_secrets: bool) -> list[str]:
    match p.action:
        case "ps":
            return ["docker", "ps", *(["-a"] if p.all else []), "--no-trunc", JSON_FORMAT]
        case "images":
            return ["docker", "images", "--no-trunc", JSON_FORMAT]
        case "inspect":
            kind, target = ("container", p.container) if p.container else ("image", p.image)
            return ["docker", "inspect", f"--type={kind}", str(target)]
        case "logs":
            since = [f"--since={p.since}"] if p.since else []
            return ["docker", "logs", f"--tail={p.tail}", *since, str(p.container)]
        case "stats":
            target = [p.container] if p.container else []
            return ["docker", "stats", "--no-stream", "--no-trunc", JSON_FORMAT, *target]
        case "pull":
            return ["docker", "pull", "--quiet", str(p.image)]
        case "run":
            return ["docker", "run", *_run_options(p, mask_secrets), str(p.image), *p.argv()]
        case "exec":
            return ["docker", "exec", *_exec_options(p, mask_secrets), str(p.container), *p.argv()]
        case "start":
            return ["docker", "start", str(p.container)]
        case "stop" | "restart":
            grace = [f"--time={p.timeout}"] if p.timeout is not None else []
            return ["docker", p.action, *grace, str(p.container)]
        case "rm":
            flags = (["--force"] if p.force else []) + (["--volumes"] if p.remove_volumes else [])
            return ["docker", "rm", *flags, str(p.container)]
        case "rmi":
            return ["docker", "rmi", *(["--force"] if p.force else []), str(p.image)]
    raise AssertionError(f"unhandled action {p.action!r}")


def _run_options(p: DockerCtlInput, mask_secrets: bool) -> list[str]:
    words = ["--detach"] if p.detach else []
    pairs: list[tuple[str, str | None]] = [
        ("name", p.name),
        ("network", p.network),
        ("ipc", p.ipc),
        ("gpus", p.gpus),
        ("shm-size", p.shm_size),
        ("restart", p.restart_policy),
        ("pull", p.pull),
        ("entrypoint", p.entrypoint),
        ("user", p.user),
        ("workdir", p.workdir),
    ]
    words += [f"--{flag}={value}" for flag, value in pairs if value is not None]
    words += ["--rm"] if p.auto_remove else []
    words += ["--privileged"] if p.privileged else []
    words += _env_words(p.env, mask_secrets)
    words += [f"--volume={volume}" for volume in p.volumes or []]
    words += [f"--publish={port}" for port in p.ports or []]
    words += [f"--device={device}" for device in p.devices or []]
    words += [f"--ulimit={name}={value}" for name, value in (p.ulimits or {}).items()]
    words += [f"--label={key}={value}" for key, value in (p.labels or {}).items()]
    return words


def _exec_options(p: DockerCtlInput, mask_secrets: bool) -> list[str]:
    words = [f"--user={p.user}"] if p.user else []
    words += [f"--workdir={p.workdir}"] if p.workdir else []
    return words + _env_words(p.env, mask_secrets)
