"""What a simple command *is*: its program and subcommands, read with the program's own grammar.

`docker --context x restart vllm` is `docker restart`; `git -C /repo status -s` is `git status`;
`nvidia-smi mig -cgi 9` is `nvidia-smi mig`; `sudo ip link set …` is `sudo ip link set`. Approval
rules compare this path exactly, so an allow rule for `nvidia-smi *` can never cover
`nvidia-smi mig …`, and one for `docker restart *` never a `docker run`.
"""

from __future__ import annotations

from agent.safety.shell.options import Grammar, read_args
from agent.safety.shell.rules_docker import GLOBAL as DOCKER_GLOBAL
from agent.safety.shell.rules_docker import OBJECTS as DOCKER_OBJECTS
from agent.safety.shell.rules_git import GLOBAL as GIT_GLOBAL
from agent.safety.shell.rules_gpu import NVIDIA_SMI_READ_SUBCOMMANDS
from agent.safety.shell.rules_launch import SUDO
from agent.safety.shell.rules_packages import APT, PIP
from agent.safety.shell.rules_services import KUBECTL, SYSTEMCTL, TMUX

FIRST_POSITIONAL: dict[str, Grammar] = {
    "systemctl": SYSTEMCTL, "kubectl": KUBECTL, "apt": APT, "apt-get": APT, "apt-cache": APT,
}  # fmt: skip
FIRST_AFTER_GLOBALS: dict[str, Grammar] = {"git": GIT_GLOBAL, "pip": PIP, "pip3": PIP,
                                           "tmux": TMUX}  # fmt: skip
TWO_WORDS = frozenset({"ip", "rdma", "nmcli", "ray", "hf", "huggingface-cli", "nvidia-ctk"})


def command_path(argv: list[str]) -> tuple[str, ...]:
    """The program and the subcommand words that select what it does."""
    if not argv:
        return ()
    program, args = argv[0].rsplit("/", 1)[-1], argv[1:]
    if program in ("sudo", "doas"):
        inner = read_args(args, SUDO).rest
        return (program, *command_path(inner)) if inner else (program,)
    if program in ("docker", "podman"):
        rest = read_args(args, DOCKER_GLOBAL).rest
        if rest[:1] and rest[0] in DOCKER_OBJECTS and len(rest) > 1:
            return (program, rest[0], rest[1])
        return (program, *rest[:1])
    if program in FIRST_AFTER_GLOBALS:
        return (program, *read_args(args, FIRST_AFTER_GLOBALS[program]).rest[:1])
    if program in FIRST_POSITIONAL:
        return (program, *read_args(args, FIRST_POSITIONAL[program]).positionals[:1])
    if program == "nvidia-smi":
        return (
            (program, *args[:1])
            if args[:1] and args[0] in NVIDIA_SMI_READ_SUBCOMMANDS
            else (program,)
        )
    if program in TWO_WORDS:
        words = [a for a in args if not a.startswith("-")]
        return (program, *words[:2])
    return (program,)
