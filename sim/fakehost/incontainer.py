"""A command line run inside an engine container (`docker exec`, or a container's main command).

Shell lists (`a && b; c`), `bash -c '…'`, `VAR=x cmd`, `export` and output redirections to files
in the container (container_files.py) are understood. The engine tools an image ships (`ray`,
`vllm`, `python3 -m sglang.launch_server`) and a few plain ones (`nvidia-smi`, `env`, `cat`,
`tail`, `pip show/install` (container_pip.py), `sleep`) exist; anything else is `command not
found`, as in a slim image.
"""

from __future__ import annotations

import re
import shlex
import sys

from . import container_files, container_pip, container_torch, gpu, procs, ray, serve, system
from .container import Container
from .container_files import MARK
from .container_shell import builtin, expand, take_input
from .state import read_state

_SEPARATORS = {"&&", "||", ";", "|", "&"}
_SHELLS = {"bash", "sh", "/bin/bash", "/bin/sh", "/usr/bin/bash"}
ENGINE_WORDS = ("ray", "vllm", "sglang")


def mentions_engine(argv: list[str]) -> bool:
    return any(word in " ".join(argv) for word in ENGINE_WORDS)


class CommandNotFound(Exception):
    """The image has no such command; who reports it (bash, or the runtime) says it its way."""


def run_argv(ctr: Container, argv: list[str]) -> int:
    """Run one argv (as docker passes it); `bash -c LINE [NAME ARGS…]` runs LINE as a shell
    list, with ARGS as its "$@".

    Without a shell, a missing command is the runtime's error, exit 126 (`OCI runtime exec
    failed: … exec: "python3": executable file not found in $PATH`, as public `docker exec`
    transcripts show it); inside `bash -c` it is bash's `command not found`, 127.
    """
    if len(argv) >= 3 and argv[0] in _SHELLS and argv[1] in ("-c", "-lc"):
        ctr.args = argv[4:]
        return run_line(ctr, argv[2])
    try:
        return _run_simple(ctr, argv)
    except CommandNotFound as missing:
        sys.stderr.write(
            "OCI runtime exec failed: exec failed: unable to start container process: exec: "
            f'"{missing}": executable file not found in $PATH: unknown\n'
        )
        return 126


def run_line(ctr: Container, line: str) -> int:
    code, skip_next = 0, False
    marked, redirects = container_files.mark(f" {line}")
    for words, sep in _split(marked):
        mine = [redirects[int(w.removeprefix(MARK))] for w in words if w.startswith(MARK)]
        words = [w for w in words if not w.startswith(MARK)]
        if words and not skip_next:
            with container_files.redirected(ctr.host_dir, ctr.id, mine):
                try:
                    code = _run_simple(ctr, words)
                except CommandNotFound as missing:
                    sys.stderr.write(f"bash: {missing}: command not found\n")
                    code = 127
        skip_next = (sep == "&&" and code != 0) or (sep == "||" and code == 0)
    return code


def _split(line: str) -> list[tuple[list[str], str]]:
    lexer = shlex.shlex(line, posix=True, punctuation_chars=";&|")
    lexer.whitespace_split = True
    parts, words = [], []
    for token in lexer:
        if token in _SEPARATORS:
            parts.append((words, token))
            words = []
        else:
            words.append(token)
    parts.append((words, ""))
    return parts


def _run_simple(ctr: Container, argv: list[str]) -> int:
    argv, into = take_input(argv)
    env = dict(ctr.env)
    while argv and re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*=.*", argv[0]):
        key, _, value = argv.pop(0).partition("=")
        env[key] = value
    if not argv:
        return 0
    if argv[0] == "export":
        for item in argv[1:]:
            key, _, value = item.partition("=")
            ctr.env[key] = value
        return 0
    argv = expand(argv, ctr, env)
    if not argv:
        return 0
    done = builtin(ctr, argv[0], argv[1:], into, _run_simple)
    if done is not None:
        return done
    scoped = Container(ctr.host_dir, ctr.name, ctr.id, env, ctr.args)
    return _dispatch(scoped, argv[0].rsplit("/", 1)[-1], argv[1:])


def _dispatch(ctr: Container, cmd: str, args: list[str]) -> int:
    tools = ctr.tools()
    if cmd in _SHELLS or cmd in ("bash", "sh"):
        return run_argv(ctr, [cmd, *args]) if args[:1] in (["-c"], ["-lc"]) else 0
    if cmd == "ray" and "ray" in tools:
        return ray.run_ray(args, ctr)
    if cmd == "vllm" and "vllm" in tools:
        return serve.run_vllm(args, ctr)
    if cmd in ("python3", "python") and args[:2] == ["-m", "sglang.launch_server"]:
        if "sglang" in tools:
            return serve.run_sglang(args[2:], ctr)
        sys.stderr.write(
            f"/usr/bin/{cmd}: Error while finding module specification for "
            "'sglang.launch_server' (ModuleNotFoundError: No module named 'sglang')\n"
        )
        return 1
    if cmd in ("python3", "python") and args[:1] == ["-c"] and "torch" in " ".join(args[1:2]):
        return container_torch.run_torch_code(ctr, args[1])
    if cmd in ("pip", "pip3"):
        return container_pip.run_pip(ctr, args)
    if cmd == "uv" and args[:1] == ["pip"]:
        return container_pip.run_pip(ctr, args[1:])
    if cmd in ("python3", "python") and args[:2] == ["-m", "pip"]:
        return container_pip.run_pip(ctr, args[2:])
    if cmd == "nvidia-smi":
        return gpu.run_nvidia_smi(args, read_state(ctr.host_dir))
    if cmd in ("env", "printenv"):
        shown = {k: v for k, v in ctr.env.items() if not args or k in args}
        print("\n".join(f"{k}={v}" if not args else v for k, v in shown.items()))
        return 0 if shown or not args else 1
    if cmd == "cat":
        written = [container_files.read(ctr.host_dir, ctr.id, a) for a in args]
        if args and None not in written:
            sys.stdout.write("".join(t or "" for t in written))
            return 0
        return system.run_cat(args, read_state(ctr.host_dir), ctr.host_dir)
    if cmd == "tail" and "-f" not in args:
        return container_files.run_tail(ctr.host_dir, ctr.id, args)
    if cmd == "echo":
        print(" ".join(args))
        return 0
    if cmd in ("true", ":"):
        return 0
    if cmd == "which":
        found = [f"/usr/local/bin/{a}" for a in args if a in tools or a in ("python3", "bash")]
        if found:
            print("\n".join(found))
        return 0 if len(found) == len(args) else 1
    if cmd == "sleep" or (cmd == "tail" and "-f" in args):
        limit = None if cmd == "tail" or args[:1] == ["infinity"] else float(args[0] or 0)
        procs.wait_while_running(ctr.host_dir, ctr.id, limit)
        return 0
    raise CommandNotFound(cmd)
