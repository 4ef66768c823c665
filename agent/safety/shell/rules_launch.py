"""Rules for commands that run other commands: wrappers, remote and privileged execution, find.

What counts is the inner command, so these rules read the wrapper's own options with its grammar
(an option's value is never taken for the command: `watch -d rm …` runs `rm`) and hand the rest
to the classifier (`RunsCommand`, `RunsScript`). Variables a wrapper sets (`env VAR=…`, `sudo
VAR=…`) are judged like assignments.
"""

from __future__ import annotations

from agent.safety.shell.environment import steering_reason
from agent.safety.shell.options import Grammar, grammar, read_args, word_set
from agent.safety.shell.outcomes import (
    Outcome,
    ProgramRule,
    RunsCommand,
    RunsScript,
    RunsStdin,
    Verdict,
    judge_options,
    mutating,
    not_understood,
    read_only,
    written_file,
)
from agent.safety.shell.paths import normalised
from agent.safety.shell.shell_words import RuntimeText
from tools.risk.assessment import Risk

SUDO = grammar(
    "-A|--askpass:x -b|--background -B|--bell -C|--close-from= -D|--chdir= -E|--preserve-env[=] "
    "-e|--edit:m -g|--group= -H|--set-home -h|--host= -i|--login -K|--remove-timestamp "
    "-k|--reset-timestamp -l|--list -N|--no-update -n|--non-interactive -P|--preserve-groups "
    "-p|--prompt= -R|--chroot= -r|--role= -S|--stdin -s|--shell -t|--type= "
    "-T|--command-timeout= -U|--other-user= -u|--user= -V|--version -v|--validate --help",
    stop_at_positional=True,
)
ENV = grammar(
    "-i|--ignore-environment -0|--null -u|--unset= -C|--chdir= -S|--split-string= -v|--debug "
    "--block-signal[=] --default-signal[=] --ignore-signal[=] --list-signal-handling "
    "-a|--argv0= --help --version",
    stop_at_positional=True,
)
WRAPPERS: dict[str, Grammar] = {
    "nohup": grammar("--help --version", stop_at_positional=True),
    "nice": grammar("-n|--adjustment= --help --version", numeric=True, stop_at_positional=True),
    "stdbuf": grammar(
        "-i|--input= -o|--output= -e|--error= --help --version", stop_at_positional=True
    ),
    "setsid": grammar(
        "-c|--ctty -f|--fork -w|--wait -h|--help -V|--version", stop_at_positional=True
    ),
    "unbuffer": grammar("-p", stop_at_positional=True),
    "exec": grammar("-a= -c -l", stop_at_positional=True),
    "builtin": grammar("", stop_at_positional=True),
    "time": grammar(
        "-f|--format= -o|--output=:w -a|--append -p|--portability -v|--verbose -q|--quiet "
        "--help -V|--version",
        stop_at_positional=True,
    ),
    "chroot": grammar(
        "--userspec= --groups= --skip-chdir --help --version", stop_at_positional=True
    ),
    "numactl": grammar(
        "-a|--all -i|--interleave= -w|--weighted-interleave= -p|--preferred= --preferred-many= "
        "-b|--balancing -m|--membind= -N|--cpunodebind= -C|--physcpubind= -l|--localalloc "
        "-H|--hardware -s|--show",
        stop_at_positional=True,
    ),
    "runuser": grammar(
        "-u|--user= -g|--group= -G|--supp-group= -l|--login -m|-p|--preserve-env "
        "-w|--whitelist-environment= -P|--pty",
        stop_at_positional=True,
    ),
    "nsenter": grammar(
        "-a|--all -t|--target= -m|--mount[=] -u|--uts[=] -i|--ipc[=] -n|--net[=] -p|--pid[=] "
        "-C|--cgroup[=] -U|--user[=] -T|--time[=] -S|--setuid= -G|--setgid= --preserve-credentials "
        "-r|--root[=] -w|--wd[=] -W|--wdns= -e|--env -F|--no-fork -Z|--follow-context -h|--help "
        "-V|--version",
        stop_at_positional=True,
    ),
}
TIMEOUT = grammar(
    "-s|--signal= -k|--kill-after= --foreground --preserve-status -v|--verbose --help --version",
    stop_at_positional=True,
)
XARGS = grammar(
    "-0|--null -a|--arg-file= -d|--delimiter= -E= -e|--eof[=] -I= -i|--replace[=] -L= "
    "-l|--max-lines[=] -n|--max-args= -o|--open-tty -P|--max-procs= -p|--interactive "
    "--process-slot-var= -r|--no-run-if-empty -s|--max-chars= --show-limits -t|--verbose -x|--exit "
    "--help --version",
    stop_at_positional=True,
)
WATCH = grammar(
    "-b|--beep -c|--color -C|--no-color -d|--differences[=] -e|--errexit -g|--chgexit "
    "-n|--interval= -p|--precise -q|--equexit= -r|--no-rerun -s|--shotsfile= -t|--no-title "
    "-w|--no-wrap -x|--exec -h|--help -v|--version",
    stop_at_positional=True,
)
SSH = grammar(
    "-4 -6 -A:m -a -C -f -G -g -K -k -M -N -n -q -s -T -t -V -v -X:m -x -Y:m -y -B= -b= -c= "
    "-D=:m -E=:w -e= -F=:x -I=:x -i= -J= -L=:m -l= -m= -O=:m -o= -P= -p= -Q= -R=:m -S= -W=:m "
    "-w=:m",
    stop_at_positional=True,
)
# `ssh -o` keys that only tune the connection; some only with the value that turns them off.
SSH_INERT_SETTINGS = word_set(
    "batchmode connecttimeout connectionattempts stricthostkeychecking userknownhostsfile "
    "globalknownhostsfile loglevel serveraliveinterval serveralivecountmax tcpkeepalive port "
    "user identityfile identitiesonly passwordauthentication pubkeyauthentication "
    "kbdinteractiveauthentication challengeresponseauthentication preferredauthentications "
    "numberofpasswordprompts compression addressfamily checkhostip hashknownhosts "
    "updatehostkeys requesttty escapechar visualhostkey hostkeyalias hostkeyalgorithms "
    "kexalgorithms ciphers macs pubkeyacceptedalgorithms pubkeyacceptedkeytypes "
    "gssapiauthentication clearallforwardings exitonforwardfailure proxyjump ipqos "
    "bindaddress bindinterface hostname certificatefile canonicalizehostname"
)
SSH_ONLY_OFF = word_set("forwardagent forwardx11 forwardx11trusted controlmaster "
                        "permitlocalcommand gatewayports")  # fmt: skip
TASKSET = grammar("-a|--all-tasks -p|--pid -c|--cpu-list -h|--help -V|--version",
                  stop_at_positional=True)  # fmt: skip
IONICE = grammar("-c|--class= -n|--classdata= -p|--pid -P|--pgid -t|--ignore -u|--uid "
                 "-h|--help -V|--version", stop_at_positional=True)  # fmt: skip
FIND_EXEC = frozenset({"-exec", "-execdir", "-ok", "-okdir"})
FIND_WRITES = {"-fprint": 1, "-fprint0": 1, "-fprintf": 2, "-fls": 1}
FIND_VALUE_TESTS = word_set(
    "-name -iname -path -ipath -wholename -iwholename -regex -iregex -lname -ilname -type "
    "-xtype -size -mtime -mmin -atime -amin -ctime -cmin -newer -anewer -cnewer -user -group "
    "-uid -gid -perm -maxdepth -mindepth -links -inum -samefile -printf -fstype -context -used "
    "-regextype -files0-from -D -O"
)
FIND_FLAG_TESTS = word_set(
    "-print -print0 -ls -prune -quit -true -false -empty -readable -writable -executable "
    "-nouser -nogroup -depth -d -xdev -mount -follow -noleaf -daystart -ignore_readdir_race "
    "-noignore_readdir_race -not ! -a -and -o -or ( ) , -L -P -H -help --help -version "
    "--version"
)
STDIN_WORDS = RuntimeText("{words from stdin}")


def _env_words(args: list[str], label: str) -> tuple[list[str], list[Outcome]]:
    """Skip `VAR=value` words; the rest is the command. Steering variables are mutating."""
    found: list[Outcome] = []
    index = 0
    while index < len(args) and "=" in args[index] and not args[index].startswith(("=", "-")):
        name = args[index].split("=", 1)[0]
        if isinstance(args[index], RuntimeText):
            found += mutating(f"'{label}' sets a variable only known at run time")
        elif reason := steering_reason(name):
            found += mutating(f"'{label} {name}=…': {reason}")
        index += 1
    return args[index:], found


def _inner(command: list[str], via: str, alone: list[Outcome]) -> list[Outcome]:
    return [RunsCommand(tuple(command), via)] if command else alone


def _sudo(name: str, args: list[str]) -> list[Outcome]:
    parsed, found = judge_options(
        name, args, SUDO, why={"-e": "edits files as root", "-A": "runs the askpass program"}
    )
    if found:
        return found
    command, floor = _env_words(parsed.rest, name)
    for kept in filter(None, (parsed.value("-E") or "").split(",")):
        if reason := steering_reason(kept):
            floor += mutating(f"'{name} --preserve-env={kept}': {reason}")
    if parsed.has("-l") and not command:
        return read_only(f"'{name} -l' lists what may be run")
    if parsed.has("-v", "-k", "-K", "-V") and not command:
        return read_only(f"'{name} {args[0]}' only checks or resets the password timestamp")
    if parsed.has("-i", "-s"):
        if not command:
            return mutating(f"'{name} -i/-s' opens a root shell")
        return [*floor, RunsScript(" ".join(command), f"{name} -s")]
    return floor + _inner(command, name, mutating(f"'{name}' without a command"))


def _env(name: str, args: list[str]) -> list[Outcome]:
    parsed, found = judge_options(name, args, ENV)
    if found:
        return found
    split = parsed.value("-S")
    if split:
        return [RunsScript(split, "env -S")]
    command, floor = _env_words(parsed.rest, name)
    alone = read_only("'env' alone prints the environment")
    return floor + _inner(command, "env", floor or alone)


def _wrapper(name: str, args: list[str]) -> list[Outcome]:
    spec = WRAPPERS[name]
    parsed, found = judge_options(name, args, spec, why={"-o": "writes its report to a file"})
    if found:
        return found
    if name == "nsenter" and parsed.rest:
        return mutating("'nsenter' enters another process's namespaces") + _inner(
            parsed.rest, name, []
        )
    if name == "numactl" and not parsed.rest and not parsed.has("-H", "-s"):
        return mutating("'numactl' without a command changes a policy")
    alone = read_only(f"'{name}' without a command only prints or does nothing")
    if name == "chroot" and len(parsed.rest) == 1:
        return [RunsStdin(f"chroot {parsed.rest[0]}")]
    command = parsed.rest[1:] if name == "chroot" else parsed.rest
    return _inner(command, name, alone)


def _timeout(name: str, args: list[str]) -> list[Outcome]:
    parsed, found = judge_options(name, args, TIMEOUT)
    if found:
        return found
    return _inner(parsed.rest[1:], "timeout", mutating("'timeout' without a command"))


def _taskset(name: str, args: list[str]) -> list[Outcome]:
    parsed, found = judge_options(name, args, TASKSET)
    if found:
        return found
    if parsed.has("-p"):
        if len(parsed.rest) <= 1:
            return read_only("'taskset -p PID' shows an affinity")
        return mutating("'taskset -p' changes a process's CPU affinity")
    return _inner(parsed.rest[1:], "taskset", mutating("'taskset' without a command"))


def _ionice(name: str, args: list[str]) -> list[Outcome]:
    parsed, found = judge_options(name, args, IONICE)
    if found:
        return found
    if parsed.has("-p", "-P", "-u"):
        if parsed.has("-c", "-n"):
            return mutating("'ionice -p' changes a process's I/O priority")
        return read_only("'ionice -p PID' shows a priority")
    return _inner(parsed.rest, "ionice", read_only("'ionice' alone prints its priority"))


def _xargs(name: str, args: list[str]) -> list[Outcome]:
    parsed, found = judge_options(name, args, XARGS)
    if found:
        return found
    replace = parsed.value("-I") or parsed.value("-i")
    if replace == "" and parsed.has("-i"):
        replace = "{}"
    command = list(parsed.rest) or ["echo"]
    if replace:
        command = [RuntimeText(w) if replace in w else w for w in command]
    else:
        command.append(STDIN_WORDS)
    return [RunsCommand(tuple(command), "xargs")]


def _watch(name: str, args: list[str]) -> list[Outcome]:
    parsed, found = judge_options(name, args, WATCH, why={"-s": "writes snapshots to a file"})
    if found:
        return found
    if not parsed.rest:
        return mutating("'watch' without a command")
    if parsed.has("-x"):
        return [RunsCommand(tuple(parsed.rest), "watch -x")]
    return [RunsScript(" ".join(parsed.rest), "watch")]


def _ssh(name: str, args: list[str]) -> list[Outcome]:
    parsed, found = judge_options(name, args, SSH, why={
        "-F": "reads a config that can run commands", "-I": "loads a PKCS#11 library",
        "-E": "writes its log to a file", "-A": "forwards your SSH agent",
        "-L": "opens a port forward", "-R": "opens a port forward",
        "-D": "opens a proxy", "-W": "forwards a connection", "-w": "opens a tunnel",
        "-O": "controls a master connection"})  # fmt: skip
    if found:
        return found
    if parsed.has("-V", "-G"):
        return read_only(f"'ssh {'-V' if parsed.has('-V') else '-G'}' only prints")
    for setting in parsed.values("-o"):
        if problem := _ssh_setting_problem(setting):
            return mutating(problem)
    if parsed.has("-N", "-f", "-M", "-s"):
        return mutating("'ssh -N/-f/-M/-s' opens a background session, master or subsystem")
    if not parsed.rest:
        return mutating("'ssh' without a host")
    host, remote = parsed.rest[0], parsed.rest[1:]
    if remote[:1] == ["--"]:
        remote = remote[1:]
    if not remote:
        return [RunsStdin(f"ssh {host}")]
    return [RunsScript(" ".join(remote), f"ssh {host}")]


def _ssh_setting_problem(setting: str) -> str | None:
    """`-o Key=Value` / `-o 'Key Value'`, read as ssh_config reads it (keys ignore case)."""
    if isinstance(setting, RuntimeText):
        return f"'ssh -o {setting}' sets an option only known at run time"
    key, _, value = setting.strip().replace("=", " ", 1).partition(" ")
    key, value = key.lower(), value.strip().strip('"').lower()
    if key in SSH_INERT_SETTINGS or (key in SSH_ONLY_OFF and value == "no"):
        return None
    return f"'ssh -o {key}' is not an option known to be harmless (it may run commands or forward)"


def _su(name: str, args: list[str]) -> list[Outcome]:
    spec = grammar("-c|--command= -s|--shell= -g|--group= -G|--supp-group= -l|--login "
                   "-m|-p|--preserve-environment -P|--pty -w|--whitelist-environment= -f "
                   "--session-command= -h|--help -V|--version")  # fmt: skip
    parsed = read_args(args, spec)
    if problems := not_understood(name, parsed, spec):
        return problems
    command = parsed.value("-c") or parsed.value("--session-command")
    if command:
        return [RunsScript(command, "su -c")]
    return mutating("'su' opens a shell as another user")


def _busybox(name: str, args: list[str]) -> list[Outcome]:
    if not args or args[0] in ("--list", "--list-full", "--help"):
        return read_only("'busybox' lists its applets")
    return [RunsCommand(tuple(args), "busybox")]


def _found_file(args: list[str]) -> str:
    """What `{}` stands for, as a path the readers' rules can judge: a file beneath the start
    folders, and beneath /dev where one of them holds it (`/`, `/proc/self/root`)."""
    starts = []
    for arg in args:
        if isinstance(arg, RuntimeText):
            return "/dev/{}"  # a folder only known at run time
        if arg.startswith(("-", "(", "!")):
            break
        starts.append(normalised(arg).rstrip("/") or "/")
    for start in starts or ["."]:
        if start == "/" or start == "/dev" or start.startswith("/dev/"):
            return "/dev/{}" if start in ("/", "/dev") else f"{start}/{{}}"
    return f"{(starts or ['.'])[0]}/{{}}"


def _find(name: str, args: list[str]) -> list[Outcome]:
    outcomes: list[Outcome] = []
    found = _found_file(args)
    index = 0
    while index < len(args):
        arg = args[index]
        if isinstance(arg, RuntimeText):
            return outcomes + mutating(f"'find' gets a word only known at run time ({arg})")
        if arg in FIND_EXEC:
            end = _exec_end(args, index + 1)
            if end is None or end == index + 1:
                return mutating(f"'find {arg}' without a command or its ';'")
            # find puts each file name in place of `{}` wherever it stands in a word (GNU
            # find's -exec ... ;), so a word holding it inside other text is data spliced
            # into it, only known at run time: in `sh -c 'cat {}'` a file name is code.
            command = tuple(
                found if word == "{}" else RuntimeText(word) if "{}" in word else word
                for word in args[index + 1 : end]
            )
            outcomes.append(RunsCommand(command, f"find {arg}"))
            index = end
        elif arg == "-delete":
            outcomes.append(Verdict(Risk.DESTRUCTIVE, "'find -delete' deletes what it finds"))
        elif arg in FIND_WRITES:
            target = args[index + 1] if index + 1 < len(args) else None
            outcomes += written_file(f"find {arg}", target) or []
            index += FIND_WRITES[arg]
        elif arg in FIND_VALUE_TESTS or (arg.startswith("-newer") and len(arg) == 8):
            index += 1
        elif arg.startswith("-") and arg not in FIND_FLAG_TESTS and len(arg) > 1:
            outcomes += mutating(f"'find': {arg} is not known to be harmless")
        index += 1
    return outcomes or read_only("'find' without -exec/-delete only lists")


def _exec_end(args: list[str], start: int) -> int | None:
    """Where a -exec ends: at `;`, or at `+` right after `{}` (find's own rule)."""
    for end in range(start, len(args)):
        if args[end] == ";" or (args[end] == "+" and args[end - 1] == "{}"):
            return end
    return None


def launch_rules() -> dict[str, ProgramRule]:
    rules: dict[str, ProgramRule] = dict.fromkeys(WRAPPERS, _wrapper)
    rules.update(
        {"sudo": _sudo, "doas": _sudo, "env": _env, "timeout": _timeout, "taskset": _taskset,
         "ionice": _ionice, "xargs": _xargs, "watch": _watch, "ssh": _ssh, "su": _su,
         "busybox": _busybox, "find": _find}
    )  # fmt: skip
    return rules
