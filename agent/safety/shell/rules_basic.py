"""Rules for everyday commands: readers and text filters, file changes, processes, power."""

from __future__ import annotations

import re

from agent.safety.shell.outcomes import (
    Outcome,
    Rule,
    destructive,
    mutating,
    read_only,
    read_options,
    word_set,
)
from agent.safety.shell.paths import is_broad_path, is_harmless_sink, is_system_path
from agent.safety.shell.sed_script import sed_script_writes

# Commands whose arguments are only data: no argument makes them write anything.
ALWAYS_READ_ONLY = word_set(
    """
    cat head tail grep egrep fgrep zgrep zcat bzcat xzcat less more ls stat file df du free uname
    arch lscpu lspci lsblk lsusb ps pgrep uptime whoami id groups printenv echo printf which type
    pwd nproc wc cut tr jq readlink realpath basename dirname lsmod modinfo getent ibstat ibstatus
    ibdev2netdev ibv_devinfo ibv_devices show_gids true false sleep test [ [[ : seq md5sum sha1sum
    sha256sum sha512sum cksum b2sum diff cmp comm column nl tac rev fold expand unexpand od hexdump
    strings base64 numfmt expr lsof vmstat iostat mpstat findmnt blkid lsns lshw dmidecode sensors
    whereis w who users last locale getconf lsb_release nslookup dig host tracepath traceroute
    cd export unset set shift wait jobs exit return read local declare readonly ulimit ss netstat
    tput hash ssh-keyscan nvidia-container-cli lsattr env
    """
)
DATA_ONLY_ARGS = (ALWAYS_READ_ONLY - {"env", "export", "set", "read", "declare", "local"}) | {"for"}
ONLY_READS = "only reads or prints"
ALWAYS_DESTRUCTIVE = {
    "rm": "deletes files",
    "rmdir": "removes directories",
    "shred": "destroys file contents",
    "dd": "writes raw blocks",
    "wipefs": "erases filesystem signatures",
    "truncate": "cuts files to a size",
    "mke2fs": "creates a filesystem (erases the device)",
    "mkswap": "formats a swap area",
    "blkdiscard": "discards every block on a device",
    "userdel": "deletes a user",
    "deluser": "deletes a user",
    "groupdel": "deletes a group",
    "kill": "sends signals to processes",
    "pkill": "kills processes by name",
    "killall": "kills processes by name",
    "reboot": "reboots the host",
    "poweroff": "powers the host off",
    "halt": "halts the host",
    "umount": "unmounts a filesystem",
    "swapoff": "disables swap",
    "rmmod": "unloads a kernel module",
}
ALWAYS_MUTATING = {
    "mkdir": "creates directories",
    "touch": "creates or updates files",
    "chmod": "changes permissions",
    "chown": "changes owners",
    "chgrp": "changes groups",
    "useradd": "adds a user",
    "usermod": "changes a user",
    "groupadd": "adds a group",
    "passwd": "changes a password",
    "insmod": "loads a kernel module",
    "newgrp": "starts a shell with another group",
    "source": "runs a script file in this shell",
    ".": "runs a script file in this shell",
    "alias": "defines an alias that changes what later commands run",
    "scp": "copies files between hosts",
    "gzip": "compresses files in place",
    "gunzip": "decompresses files in place",
    "unzip": "extracts files",
    "patch": "changes files",
}
TAR_RUNS_PROGRAM = (
    "--to-command", "--checkpoint-action", "--use-compress-program", "--info-script",
    "--new-volume-script", "--rmt-command", "--rsh-command",
)  # fmt: skip
PARTITION_LIST_FLAGS = frozenset({"-l", "--list", "-p", "--print", "-s"})


def _always(risk_reason: tuple[str, str]) -> Rule:
    level, reason = risk_reason
    builder = {"destructive": destructive, "mutating": mutating}[level]

    def rule(name: str, args: list[str]) -> list[Outcome]:
        return builder(f"'{name}' {reason}")

    return rule


def _read_only_rule(name: str, args: list[str]) -> list[Outcome]:
    return read_only(f"'{name}' {ONLY_READS}")


def _partition_tool(name: str, args: list[str]) -> list[Outcome]:
    only_listing = set(args) <= PARTITION_LIST_FLAGS | {a for a in args if a.startswith("/dev/")}
    if only_listing and any(a in PARTITION_LIST_FLAGS for a in args):
        return read_only(f"'{name} -l' only lists partitions")
    return destructive(f"'{name}' rewrites partition tables")


def _mkfs(name: str, args: list[str]) -> list[Outcome]:
    return destructive(f"'{name}' creates a filesystem (erases the device)")


def _copy_or_move(name: str, args: list[str]) -> list[Outcome]:
    parsed = read_options(args, frozenset({"-t", "--target-directory", "-S", "--suffix"}))
    target = parsed.options.get("-t") or parsed.options.get("--target-directory")
    if target is None and parsed.positionals:
        target = parsed.positionals[-1]
    if target is not None and is_system_path(target):
        return destructive(f"'{name}' writes into system path {target}")
    moved = [p for p in parsed.positionals if is_system_path(p)]
    if name == "mv" and moved:
        return destructive(f"'mv' moves system path {moved[0]} away")
    verb = {"mv": "moves", "cp": "copies", "rsync": "copies", "ln": "links"}.get(name, "installs")
    return mutating(f"'{name}' {verb} files")


def _rsync(name: str, args: list[str]) -> list[Outcome]:
    if any(a.startswith(("--delete", "--remove-source-files")) for a in args):
        return destructive("'rsync --delete' removes files at the destination")
    return _copy_or_move(name, [a for a in args if not a.startswith("-")])


def _recursive_owner(name: str, args: list[str]) -> list[Outcome]:
    parsed = read_options(args, frozenset({"--reference", "--from"}))
    recursive = parsed.has("-R", "--recursive")
    broad = [p for p in parsed.positionals[1:] if is_broad_path(p)]
    if recursive and broad:
        return destructive(f"'{name} -R' on {broad[0]} changes a whole system tree")
    if any(is_system_path(p) for p in parsed.positionals[1:]):
        return mutating(f"'{name}' changes system files")
    return mutating(f"'{name}' changes {'owners' if name != 'chmod' else 'permissions'}")


def _tee(name: str, args: list[str]) -> list[Outcome]:
    files = [a for a in args if not a.startswith("-") or a == "-"]
    files = [f for f in files if not is_harmless_sink(f)]
    system = [f for f in files if is_system_path(f)]
    if system:
        return destructive(f"'tee' writes into system file {system[0]}")
    if files:
        return mutating(f"'tee' writes {files[0]}")
    return read_only("'tee' without files only copies its input")


def _sort(name: str, args: list[str]) -> list[Outcome]:
    parsed = read_options(args, frozenset({"-o", "--output", "-k", "-t", "-S", "-T"}))
    if parsed.has("--compress-program"):
        return mutating("'sort --compress-program' runs a program")
    output = parsed.options.get("-o") or parsed.options.get("--output")
    if output and not is_harmless_sink(output):
        return mutating(f"'sort -o' writes {output}")
    return read_only(f"'sort' {ONLY_READS}")


def _uniq(name: str, args: list[str]) -> list[Outcome]:
    parsed = read_options(args, frozenset({"-f", "-s", "-w"}))
    if len(parsed.positionals) >= 2 and not is_harmless_sink(parsed.positionals[1]):
        return mutating(f"'uniq' writes its output to {parsed.positionals[1]}")
    return read_only(f"'uniq' {ONLY_READS}")


def _tree(name: str, args: list[str]) -> list[Outcome]:
    if "-o" in args:
        return mutating("'tree -o' writes a file")
    return read_only(f"'tree' {ONLY_READS}")


def _yq(name: str, args: list[str]) -> list[Outcome]:
    if any(a in ("-i", "--inplace") or a.startswith("--inplace=") for a in args):
        return mutating("'yq -i' edits files in place")
    return read_only(f"'yq' {ONLY_READS}")


def _xxd(name: str, args: list[str]) -> list[Outcome]:
    positionals = read_options(args, frozenset({"-c", "-g", "-l", "-s", "-o", "-n"})).positionals
    if len(positionals) >= 2 and not is_harmless_sink(positionals[1]):
        return mutating(f"'xxd' writes {positionals[1]}")
    return read_only(f"'xxd' {ONLY_READS}")


def _awk(name: str, args: list[str]) -> list[Outcome]:
    parsed = read_options(
        args, frozenset({"-F", "-v", "-f", "-i", "-l", "-E"}), stop_at_positional=True
    )
    if parsed.has("-f", "-E"):
        return mutating(f"'{name} -f' runs a program file that was not read")
    if parsed.options.get("-i") == "inplace":
        return mutating(f"'{name} -i inplace' edits files")
    if parsed.rest_index >= len(args):
        return mutating(f"'{name}' without a program")
    program = args[parsed.rest_index]
    if "system(" in program or re.search(r"(?<!\|)\|(?!\|)", program):
        return mutating(f"'{name}' program runs commands (system() or a pipe)")
    if re.search(r"\bprintf?\b[^;{}]*>", program):
        return mutating(f"'{name}' program writes to a file (print >)")
    return read_only(f"'{name}' program only reads and prints")


def _sed(name: str, args: list[str]) -> list[Outcome]:
    parsed = read_options(args, frozenset({"-e", "--expression", "-f", "--file", "-l", "-s"}))
    short_flags = [a for a in args if a.startswith("-") and not a.startswith("--")]
    if any(a.startswith("--in-place") for a in args) or any(
        "i" in a[1:].split("e")[0] for a in short_flags
    ):
        return mutating("'sed -i' edits files in place")
    if parsed.has("-f", "--file"):
        return mutating("'sed -f' runs a script file that was not read")
    scripts = [v for k, v in parsed.options.items() if k in ("-e", "--expression")]
    if not scripts and parsed.positionals:
        scripts = [parsed.positionals[0]]
    for script in scripts:
        if problem := sed_script_writes(script):
            return mutating(f"'sed' script {problem}")
    return read_only("'sed' without -i only prints")


def _date(name: str, args: list[str]) -> list[Outcome]:
    parsed = read_options(args, frozenset({"-d", "--date", "-r", "--reference", "-f"}))
    if parsed.has("-s", "--set") or any(not p.startswith("+") for p in parsed.positionals):
        return mutating("'date' sets the clock")
    return read_only(f"'date' {ONLY_READS}")


def _hostname(name: str, args: list[str]) -> list[Outcome]:
    if all(a.startswith("-") and a not in ("-F", "--file", "-b", "--boot") for a in args):
        return read_only("'hostname' only prints the name")
    return mutating("'hostname' with a name sets it")


def _top(name: str, args: list[str]) -> list[Outcome]:
    parsed = read_options(args, frozenset({"-n", "-d", "-p", "-u", "-U", "-o", "-w"}))
    if parsed.has("-b") and parsed.has("-n"):
        return read_only("'top -b -n' prints a snapshot")
    return mutating("'top' without -b -n is interactive and never ends")


def _ping(name: str, args: list[str]) -> list[Outcome]:
    parsed = read_options(args, frozenset({"-c", "-I", "-s", "-M", "-W", "-w", "-i", "-t", "-Q"}))
    if parsed.has("-f"):
        return mutating("'ping -f' floods the network")
    if parsed.has("-c", "-w"):
        return read_only("'ping -c' sends a few probes")
    return mutating("'ping' without -c never ends")


def _kill(name: str, args: list[str]) -> list[Outcome]:
    if args and args[0] in ("-l", "-L", "--list", "-0"):
        return read_only("'kill -l/-0' only lists signals or checks a process exists")
    return destructive("'kill' sends signals to processes")


def _shutdown(name: str, args: list[str]) -> list[Outcome]:
    if "-c" in args:
        return mutating("'shutdown -c' cancels a scheduled shutdown")
    return destructive(f"'{name}' shuts the host down")


def _init(name: str, args: list[str]) -> list[Outcome]:
    if args and args[0] in ("0", "6"):
        return destructive(f"'{name} {args[0]}' halts or reboots the host")
    return mutating(f"'{name}' changes the runlevel")


def _dmesg(name: str, args: list[str]) -> list[Outcome]:
    if any(a in ("-C", "-c", "--clear", "--read-clear") for a in args):
        return destructive("'dmesg -c/-C' erases the kernel log")
    if any(
        a in ("-n", "-D", "-E", "--console-off", "--console-on", "--console-level") for a in args
    ):
        return mutating("'dmesg' changes console logging")
    return read_only(f"'dmesg' {ONLY_READS}")


def _sysctl(name: str, args: list[str]) -> list[Outcome]:
    if any(a in ("-w", "--write", "-p", "--load", "--system") or "=" in a for a in args):
        return mutating("'sysctl' sets kernel parameters")
    return read_only("'sysctl' only reads kernel parameters")


def _mount(name: str, args: list[str]) -> list[Outcome]:
    if all(a in ("-l", "--show-labels") for a in args):
        return read_only("'mount' without arguments lists mounts")
    return mutating("'mount' mounts a filesystem")


def _swapon(name: str, args: list[str]) -> list[Outcome]:
    if all(a in ("--show", "-s", "--summary", "--noheadings", "--bytes") for a in args):
        return read_only("'swapon --show' lists swap")
    return mutating("'swapon' enables swap")


def _crontab(name: str, args: list[str]) -> list[Outcome]:
    if "-r" in args:
        return destructive("'crontab -r' deletes the crontab")
    if args and all(a in ("-l", "-u") or not a.startswith("-") for a in args) and "-l" in args:
        return read_only("'crontab -l' lists jobs")
    return mutating("'crontab' changes scheduled jobs")


def _modprobe(name: str, args: list[str]) -> list[Outcome]:
    if any(a in ("-r", "--remove") for a in args):
        return destructive("'modprobe -r' unloads a kernel module")
    if any(a in ("-n", "--dry-run", "-c", "--showconfig", "--show-depends", "-D") for a in args):
        return read_only("'modprobe' dry run only prints")
    return mutating("'modprobe' loads a kernel module")


def _tar(name: str, args: list[str]) -> list[Outcome]:
    if any(a.startswith(TAR_RUNS_PROGRAM) for a in args) or "-I" in args or "-F" in args:
        return mutating("'tar' runs a helper program (--to-command, --checkpoint-action, -I)")
    first = args[0] if args else ""
    mode = first.lstrip("-") if first and not first.startswith("--") else ""
    if ("t" in mode or "--list" in args) and "x" not in mode and "c" not in mode:
        return read_only("'tar t' only lists an archive")
    return mutating("'tar' writes files or archives")


def _unzip(name: str, args: list[str]) -> list[Outcome]:
    if any(a in ("-l", "-v", "-t", "-Z") for a in args):
        return read_only("'unzip -l' only lists an archive")
    return mutating("'unzip' extracts files")


def _iconv(name: str, args: list[str]) -> list[Outcome]:
    if any(a == "-o" or a.startswith("--output") for a in args):
        return mutating("'iconv -o' writes a file")
    return read_only(f"'iconv' {ONLY_READS}")


def _history(name: str, args: list[str]) -> list[Outcome]:
    if any(a in ("-c", "-d", "-w", "-a", "-r", "-n") for a in args):
        return mutating("'history' changes the shell history")
    return read_only("'history' lists commands")


def _for(name: str, args: list[str]) -> list[Outcome]:
    return read_only("'for' only loops over words")


def basic_rules() -> dict[str, Rule]:
    rules: dict[str, Rule] = dict.fromkeys(ALWAYS_READ_ONLY, _read_only_rule)
    rules.update({n: _always(("destructive", r)) for n, r in ALWAYS_DESTRUCTIVE.items()})
    rules.update({n: _always(("mutating", r)) for n, r in ALWAYS_MUTATING.items()})
    rules.update(dict.fromkeys(("fdisk", "parted", "sgdisk", "sfdisk", "gdisk"), _partition_tool))
    rules.update(dict.fromkeys(("mkfs",), _mkfs))
    rules.update(dict.fromkeys(("cp", "mv", "ln", "install"), _copy_or_move))
    rules.update(dict.fromkeys(("chmod", "chown", "chgrp"), _recursive_owner))
    rules.update(dict.fromkeys(("awk", "gawk", "mawk", "nawk"), _awk))
    rules.update(dict.fromkeys(("shutdown",), _shutdown))
    rules.update(dict.fromkeys(("init", "telinit"), _init))
    rules.update(
        {
            "rsync": _rsync,
            "tee": _tee,
            "sort": _sort,
            "uniq": _uniq,
            "tree": _tree,
            "xxd": _xxd,
            "yq": _yq,
            "sed": _sed,
            "date": _date,
            "hostname": _hostname,
            "top": _top,
            "ping": _ping,
            "ping6": _ping,
            "kill": _kill,
            "dmesg": _dmesg,
            "sysctl": _sysctl,
            "mount": _mount,
            "swapon": _swapon,
            "crontab": _crontab,
            "modprobe": _modprobe,
            "tar": _tar,
            "unzip": _unzip,
            "iconv": _iconv,
            "history": _history,
            "for": _for,
        }
    )
    return rules


def is_mkfs(name: str) -> bool:
    return name.startswith("mkfs.")
