"""Rules for docker, podman and compose: listing reads, `run`/`exec` are judged flag by flag.

`docker run` starts something (mutating) and is destructive when a flag hands the host to the
container (`tools.docker.risk` says which); the command it runs is judged too. `docker exec`
is judged by the command it runs inside the container, with the same grammar as on the host.
"""

from __future__ import annotations

from agent.safety.shell.endpoints import endpoint_problem
from agent.safety.shell.environment import steering_reason
from agent.safety.shell.options import Grammar, Parsed, grammar, read_args
from agent.safety.shell.outcomes import (
    Outcome,
    ProgramRule,
    RunsCommand,
    destructive,
    judge_options,
    mutating,
    not_understood,
    option_effects,
    read_only,
    understood,
)
from tools.risk.container_access import run_flag_problems

GLOBAL = grammar(
    "-H|--host= -c|--context= -l|--log-level= -D|--debug --tls --tlsverify --tlscacert= "
    "--tlscert= --tlskey= --config=:x -v|--version -h|--help",
    stop_at_positional=True,
)
LISTING = grammar(
    "-a|--all -f|--filter= --format= -q|--quiet --no-trunc -s|--size -n|--last= -l|--latest "
    "--digests --tree -h|--help --type= -v|--verbose --pretty --details -t|--timestamps "
    "--since= --until= --tail= --follow --no-stream --limit= -H|--human --platform= "
    "--kubeconfig= --insecure --raw --no-resolve --quiet"
)
LOGS = grammar("--details -f|--follow --since= -n|--tail= -t|--timestamps --until= -h|--help")
WRITES_OUTPUT = grammar("-o|--output=:w --platform= -h|--help")
RUN = grammar(
    "-a|--attach= --add-host= --annotation= --blkio-weight= --blkio-weight-device= --cap-add= "
    "--cap-drop= --cgroup-parent= --cgroupns= --cidfile= --cpu-count= --cpu-percent= "
    "--cpu-period= --cpu-quota= --cpu-rt-period= --cpu-rt-runtime= -c|--cpu-shares= --cpus= "
    "--cpuset-cpus= --cpuset-mems= -d|--detach[=] --detach-keys= --device= --device-cgroup-rule= "
    "--device-read-bps= --device-read-iops= --device-write-bps= --device-write-iops= "
    "--disable-content-trust[=] --dns= --dns-option= --dns-search= --domainname= --entrypoint= "
    "-e|--env= --env-file= --expose= --gpus= --group-add= --health-cmd= --health-interval= "
    "--health-retries= --health-start-period= --health-start-interval= --health-timeout= "
    "--help -h|--hostname= --init[=] -i|--interactive[=] --io-maxbandwidth= --io-maxiops= --ip= "
    "--ip6= --ipc= --isolation= --kernel-memory= -l|--label= --label-file= --link= "
    "--link-local-ip= --log-driver= --log-opt= --mac-address= -m|--memory= "
    "--memory-reservation= --memory-swap= --memory-swappiness= --mount= --name= "
    "--network|--net= --network-alias|--net-alias= --no-healthcheck[=] --oom-kill-disable[=] "
    "--oom-score-adj= --pid= --pids-limit= --platform= --privileged[=] -p|--publish= "
    "-P|--publish-all[=] --pull= -q|--quiet[=] --read-only[=] --restart= --rm[=] --runtime= "
    "--security-opt= --shm-size= --sig-proxy[=] --stop-signal= --stop-timeout= --storage-opt= "
    "--sysctl= --tmpfs= -t|--tty[=] --ulimit= -u|--user= --userns= --uts= -v|--volume= "
    "--volume-driver= --volumes-from= -w|--workdir= --use-api-socket[=]",
    stop_at_positional=True,
)
EXEC = grammar(
    "-d|--detach[=] --detach-keys= -e|--env= --env-file= -i|--interactive[=] --privileged[=] "
    "-t|--tty[=] -u|--user= -w|--workdir= -h|--help",
    stop_at_positional=True,
)
COMPOSE = grammar(
    "-f|--file= -p|--project-name= --profile= --env-file= --project-directory= --ansi= "
    "--progress= --parallel= --compatibility --dry-run --all-resources -h|--help -v|--version",
    stop_at_positional=True,
)
COMPOSE_LISTING = grammar(
    "-a|--all -q|--quiet --services --format= --status= -f|--follow -t|--timestamps --tail= "
    "--since= --until= --no-color --no-log-prefix --filter= --no-interpolate --no-normalize "
    "--resolve-image-digests -o|--output=:w --hash= --images --profiles --volumes --variables "
    "--environment --no-trunc --index= --short --no-consistency --no-path-resolution "
    "--dry-run -h|--help"
)
READ_VERBS: dict[str, Grammar] = {
    "ps": LISTING, "images": LISTING, "inspect": LISTING, "logs": LOGS, "version": LISTING,
    "info": LISTING, "port": LISTING, "diff": LISTING, "history": LISTING, "search": LISTING,
    "events": LISTING, "ls": LISTING, "list": LISTING, "df": LISTING, "show": LISTING,
    "wait": LISTING, "du": LISTING, "save": WRITES_OUTPUT, "export": WRITES_OUTPUT,
}  # fmt: skip
DESTRUCTIVE_VERBS = {
    "rm": "removes a container", "rmi": "removes an image", "stop": "stops a container",
    "kill": "kills a container", "prune": "deletes unused objects", "remove": "removes objects",
    "down": "stops and removes the stack's containers", "leave": "leaves the swarm",
}  # fmt: skip
OBJECTS = frozenset(
    {"container", "image", "network", "volume", "system", "builder", "buildx", "plugin", "node",
     "service", "context", "manifest", "compose", "swarm", "secret", "config", "trust"}
)  # fmt: skip
COMPOSE_READ = frozenset({"ps", "logs", "config", "ls", "images", "top", "version", "port",
                          "events", "convert"})  # fmt: skip


def _docker(name: str, args: list[str]) -> list[Outcome]:
    parsed, problems = understood(name, args, GLOBAL)
    if problems:
        return problems
    why = {"--config": "reads a client config that can run credential helpers"}
    effects = option_effects(name, parsed, why) + endpoint_outcomes(name, parsed)
    rest = parsed.rest
    if not rest:
        if parsed.has("-v", "-h"):
            return effects or read_only(f"'{name} --version' prints a version")
        return mutating(f"'{name}' without a subcommand")
    if name == "docker-compose":
        rest = ["compose", *rest]
    verb = rest[0]
    if verb == "compose":
        return effects + _compose(rest[1:])
    if verb in OBJECTS and len(rest) > 1 and not rest[1].startswith("-"):
        return effects + _verb(rest[1], rest[2:], f"{name} {verb} {rest[1]}", obj=verb)
    return effects + _verb(verb, rest[1:], f"{name} {verb}")


def endpoint_outcomes(name: str, parsed: Parsed) -> list[Outcome]:
    """`-H`/`--context` choose the daemon, which receives the registry credentials too."""
    found: list[Outcome] = []
    for host in parsed.values("-H"):
        if problem := endpoint_problem(host, f"'{name} -H' sends requests to"):
            found += mutating(problem)
    context = parsed.value("-c")
    if context not in (None, "default"):
        found += mutating(
            f"'{name} --context {context}' talks to a daemon whose address was not read"
        )
    return found


def _verb(verb: str, args: list[str], label: str, obj: str = "") -> list[Outcome]:
    if obj == "system" and verb in ("df", "info", "events"):
        return _listing(READ_VERBS[verb], args, label)
    if verb == "stats":
        parsed, found = judge_options(label, args, LISTING)
        if found:
            return found
        if parsed.has("--no-stream"):
            return read_only(f"'{label} --no-stream' prints one sample")
        return mutating(f"'{label}' without --no-stream never ends")
    if verb == "top":
        return read_only(f"'{label}' only lists processes")
    if verb in READ_VERBS:
        return _listing(READ_VERBS[verb], args, label)
    if verb in DESTRUCTIVE_VERBS:
        return destructive(f"'{label}' {DESTRUCTIVE_VERBS[verb]}")
    if verb == "exec":
        return _exec(args, label)
    if verb in ("run", "create"):
        return _run(args, label)
    return mutating(f"'{label}' changes containers or images")


def _listing(spec: Grammar, args: list[str], label: str) -> list[Outcome]:
    _, found = judge_options(label, args, spec)
    return found or read_only(f"'{label}' only reads")


def _run(args: list[str], label: str) -> list[Outcome]:
    parsed = read_args(args, RUN)
    if problems := not_understood(label, parsed, RUN):
        return problems
    outcomes = mutating(f"'{label}' starts a new container")
    flags = run_flag_problems(
        privileged=parsed.has("--privileged"),
        volumes=[*parsed.values("-v"), *parsed.values("--mount")],
        devices=parsed.values("--device"),
        pid=parsed.value("--pid"),
        userns=parsed.value("--userns"),
        cap_add=parsed.values("--cap-add"),
        security_opt=parsed.values("--security-opt"),
    )
    if parsed.has("--use-api-socket"):
        flags.append("--use-api-socket hands the container the Docker socket")
    if flags:
        return destructive(f"'{label}': {'; '.join(flags)}")
    outcomes += _env_outcomes(label, parsed.values("-e"), parsed.has("--env-file"))
    entrypoint = parsed.value("--entrypoint")
    command = ([entrypoint] if entrypoint else []) + parsed.rest[1:]
    if command and parsed.rest:
        outcomes.append(RunsCommand(tuple(command), f"{label} {parsed.rest[0]}"))
    return outcomes


def _exec(args: list[str], label: str) -> list[Outcome]:
    parsed = read_args(args, EXEC)
    if problems := not_understood(label, parsed, EXEC):
        return problems
    if len(parsed.rest) < 2:
        return mutating(f"'{label}' without a command")
    outcomes = _env_outcomes(label, parsed.values("-e"), parsed.has("--env-file"))
    if parsed.has("--privileged"):
        outcomes += mutating(f"'{label} --privileged' runs with extended privileges")
    outcomes.append(RunsCommand(tuple(parsed.rest[1:]), f"{label} {parsed.rest[0]}"))
    return outcomes


def _env_outcomes(label: str, assignments: list[str], env_file: bool) -> list[Outcome]:
    if env_file:
        return mutating(f"'{label} --env-file' sets variables that were not read")
    for assignment in assignments:
        if reason := steering_reason(assignment.split("=", 1)[0]):
            return mutating(f"'{label} -e': {reason}")
    return []


def _compose(args: list[str]) -> list[Outcome]:
    parsed, found = judge_options("docker compose", args, COMPOSE)
    if found:
        return found
    if not parsed.rest:
        if parsed.has("-v", "-h"):
            return read_only("'docker compose --version' prints a version")
        return mutating("'docker compose' without a subcommand")
    action, rest = parsed.rest[0], parsed.rest[1:]
    label = f"docker compose {action}"
    if action in COMPOSE_READ:
        return _listing(COMPOSE_LISTING, rest, label)
    if action in ("down", "rm", "stop", "kill"):
        return destructive(f"'{label}' stops or removes the stack's containers")
    if action in ("exec", "run"):
        compose_exec = grammar(
            "-d|--detach -e|--env= -u|--user= -w|--workdir= --index= -T|--no-TTY -i|--interactive "
            "-t|--tty --privileged --rm --name= --entrypoint= -v|--volume= -p|--publish= "
            "--service-ports --no-deps --build --pull= --quiet-pull --use-aliases --cap-add= "
            "--cap-drop= -l|--label=",
            stop_at_positional=True,
        )
        inner = read_args(rest, compose_exec)
        if problems := not_understood(label, inner, compose_exec):
            return problems
        floor = mutating(f"'{label}' starts a container") if action == "run" else []
        if len(inner.rest) < 2:
            return floor or mutating(f"'{label}' without a command")
        env = _env_outcomes(label, inner.values("-e"), False)
        return floor + env + [RunsCommand(tuple(inner.rest[1:]), f"{label} {inner.rest[0]}")]
    return mutating(f"'{label}' changes the stack")


def docker_rules() -> dict[str, ProgramRule]:
    return {"docker": _docker, "docker-compose": _docker, "podman": _docker}
