"""Rules for commands that change files, processes, users and power: copy, move, delete, archive.

Most are never read-only; a few have a listing mode that is (`tar -t`, `unzip -l`, `fdisk -l`,
`crontab -l`, `kill -l`), recognised only when nothing else in the words could change anything.
"""

from __future__ import annotations

from agent.safety.shell.options import grammar, read_args
from agent.safety.shell.outcomes import (
    Outcome,
    ProgramRule,
    destructive,
    judge_options,
    mutating,
    read_only,
)
from agent.safety.shell.paths import is_broad_path, is_harmless_sink, is_system_path
from agent.safety.shell.shell_words import RuntimeText

ALWAYS_DESTRUCTIVE = {
    "rm": "deletes files",
    "rmdir": "removes directories",
    "unlink": "deletes a file",
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
    "useradd": "adds a user",
    "usermod": "changes a user",
    "groupadd": "adds a group",
    "passwd": "changes a password",
    "chpasswd": "changes passwords",
    "insmod": "loads a kernel module",
    "newgrp": "starts a shell with another group",
    "scp": "copies files between hosts",
    "sftp": "transfers files between hosts",
    "zip": "writes an archive",
    "patch": "changes files",
    "mktemp": "creates a temporary file",
    "mkfifo": "creates a named pipe",
    "mknod": "creates a device file",
    "sync": "flushes file systems",
    "ldconfig": "rebuilds the library cache",
    "update-alternatives": "changes system links",
    "renice": "changes process priorities",
    "chattr": "changes file attributes",
    "setfacl": "changes file access lists",
    "split": "writes files",
    "csplit": "writes files",
    "install": "installs files",
    "make": "runs a build",
}
TAR = grammar(
    "-A|--catenate|--concatenate -c|--create -d|--diff|--compare --delete -r|--append -t|--list "
    "--test-label -u|--update -x|--extract|--get --show-defaults -f|--file= -v|--verbose "
    "-z|--gzip|--gunzip|--ungzip -j|--bzip2 -J|--xz --lzma --lzip --lzop --zstd "
    "-a|--auto-compress -Z|--compress|--uncompress -C|--directory= -T|--files-from= "
    "-X|--exclude-from= --exclude= --wildcards --no-wildcards --anchored --no-anchored "
    "--ignore-case -O|--to-stdout -k|--keep-old-files --keep-newer-files --skip-old-files "
    "--overwrite --overwrite-dir -p|--preserve-permissions|--same-permissions --no-same-owner "
    "--same-owner --numeric-owner --owner= --group= --mode= --mtime= -m|--touch "
    "-h|--dereference -P|--absolute-names --strip-components= --transform|--xform= "
    "-S|--sparse -W|--verify -b|--blocking-factor= -B|--read-full-records -i|--ignore-zeros "
    "--force-local --occurrence[=] --totals[=] -R|--block-number --utc --full-time "
    "--show-transformed-names --quoting-style= --null -l|--check-links --one-file-system "
    "-g|--listed-incremental=:w -G|--incremental --index-file=:w -I|--use-compress-program=:x "
    "--to-command=:x --checkpoint[=] --checkpoint-action=:x "
    "-F|--info-script|--new-volume-script=:x "
    "--rmt-command=:x --rsh-command=:x -M|--multi-volume -L|--tape-length= -V|--label= "
    "--no-recursion --recursion --remove-files:d --unlink-first -U --recursive-unlink:d "
    "--backup[=] --suffix= --warning= -w|--interactive|--confirmation -s|--preserve-order "
    "--exclude-vcs --exclude-caches --exclude-backups --acls --xattrs --selinux --no-acls "
    "--no-xattrs --sort= --format= -H -o --posix --pax-option= --hole-detection= "
    "--delay-directory-restore --no-overwrite-dir --ignore-failed-read --restrict -? --help "
    "--usage --version"
)
TAR_READ_MODES = frozenset({"-t", "--test-label", "--show-defaults", "--help", "--version", "-d"})
TAR_WRITE_MODES = ("-c", "-x", "-r", "-u", "-A", "--delete")
COMPRESSOR = grammar(
    "-c|--stdout|--to-stdout -d|--decompress|--uncompress -z|--compress -f|--force -h|--help "
    "-k|--keep -l|--list -L|--license -n|--no-name -N|--name -q|--quiet -r|--recursive "
    "-S|--suffix= -t|--test -v|--verbose -V|--version -1 -2 -3 -4 -5 -6 -7 -8 -9 -0 --fast "
    "--best --rsyncable --synchronous -T|--threads= -e|--extreme -M|--memlimit= --format= "
    "-F= --long[=] --ultra -s|--small -o=:w --rm:d -p|--processes="
)
COMPRESSORS = ("gzip", "gunzip", "bzip2", "bunzip2", "xz", "unxz", "zstd", "unzstd", "pigz",
               "lz4")  # fmt: skip
PARTITION_LIST_FLAGS = frozenset({"-l", "--list", "-p", "--print", "-s"})
ICONV = grammar(
    "-f|--from-code= -t|--to-code= -l|--list -c -s|--silent --verbose -o|--output=:w -?|--help "
    "--usage -V|--version"
)
CP_VALUES = grammar(
    "-t|--target-directory= -S|--suffix= --reference= --from= --backup[=] --sparse= --reflink[=] "
    "--preserve[=] --no-preserve= --update[=] --context[=] -f|--force -i|--interactive "
    "-n|--no-clobber -r|-R|--recursive -a|--archive -v|--verbose -p -d -l|--link -L|--dereference "
    "-P|--no-dereference -s|--symbolic-link -u -x|--one-file-system -T|--no-target-directory "
    "-b -H -Z --parents --attributes-only --remove-destination --strip-trailing-slashes "
    "--copy-contents --debug --keep-directory-symlink --exchange --no-copy --help --version "
    "-m|--mode= -o|--owner= -g|--group= -D -c -C|--compare -e"
)


def _always(level: str, reason: str) -> ProgramRule:
    builder = destructive if level == "destructive" else mutating

    def rule(name: str, args: list[str]) -> list[Outcome]:
        return builder(f"'{name}' {reason}")

    return rule


def _compressor(name: str, args: list[str]) -> list[Outcome]:
    """To stdout (`-c`, or no files: a filter), listing or testing only reads."""
    parsed, found = judge_options(name, args, COMPRESSOR, why={"--rm": "deletes the source"})
    if found:
        return found
    if not parsed.positionals or parsed.has("-c", "-l", "-t"):
        return read_only(f"'{name}' writes to stdout or only lists")
    return mutating(f"'{name}' replaces files with their (de)compressed form")


def _partition_tool(name: str, args: list[str]) -> list[Outcome]:
    listing = all(a in PARTITION_LIST_FLAGS or a.startswith("/dev/") for a in args)
    if listing and any(a in PARTITION_LIST_FLAGS for a in args):
        return read_only(f"'{name} -l' only lists partitions")
    return destructive(f"'{name}' rewrites partition tables")


def _copy_or_move(name: str, args: list[str]) -> list[Outcome]:
    parsed = read_args(args, CP_VALUES)
    target = parsed.value("-t")
    if target is None and parsed.positionals:
        target = parsed.positionals[-1]
    if target is not None and (isinstance(target, RuntimeText) or is_system_path(target)):
        return destructive(f"'{name}' writes into {target}")
    moved = [p for p in parsed.positionals if is_system_path(p)]
    if name == "mv" and moved:
        return destructive(f"'mv' moves system path {moved[0]} away")
    verb = {"mv": "moves", "cp": "copies", "ln": "links"}.get(name, "installs")
    return mutating(f"'{name}' {verb} files")


def _rsync(name: str, args: list[str]) -> list[Outcome]:
    if any(a.startswith(("--delete", "--remove-source-files")) for a in args):
        return destructive("'rsync --delete' removes files at the destination")
    if any(a.startswith(("-e", "--rsh", "--rsync-path")) for a in args):
        return mutating("'rsync -e/--rsync-path' runs a program")
    target = next((a for a in reversed(args) if not a.startswith("-")), None)
    if target is not None and is_system_path(target):
        return destructive(f"'rsync' writes into system path {target}")
    return mutating("'rsync' copies files")


def _recursive_owner(name: str, args: list[str]) -> list[Outcome]:
    recursive = any(a in ("-R", "--recursive") or (a[:1] == "-" and "R" in a[1:2]) for a in args)
    paths = [a for a in args if not a.startswith("-")][1:]
    broad = [p for p in paths if is_broad_path(p)]
    if recursive and broad:
        return destructive(f"'{name} -R' on {broad[0]} changes a whole system tree")
    if any(is_system_path(p) for p in paths):
        return mutating(f"'{name}' changes system files")
    return mutating(f"'{name}' changes {'permissions' if name == 'chmod' else 'owners'}")


def _tee(name: str, args: list[str]) -> list[Outcome]:
    parsed = read_args(args, grammar("-a|--append -i|--ignore-interrupts -p --output-error[=] "
                                     "--help --version"))  # fmt: skip
    if parsed.problem:
        return mutating(f"'tee': {parsed.problem}")
    files = [f for f in parsed.positionals if not is_harmless_sink(f)]
    system = [f for f in files if isinstance(f, RuntimeText) or is_system_path(f)]
    if system:
        return destructive(f"'tee' writes into {system[0]}")
    if files:
        return mutating(f"'tee' writes {files[0]}")
    return read_only("'tee' without files only copies its input")


def _kill(name: str, args: list[str]) -> list[Outcome]:
    """Read-only only as one listing or `-0` option and plain operands: with more than one
    signal option the last one wins (`kill -0 -9 PID` kills)."""
    operands = args[1:]
    plain = all(not isinstance(a, RuntimeText) and not a.startswith("-") for a in operands)
    if args[:1] in (["-l"], ["-L"], ["--list"], ["--table"], ["-0"]) and plain:
        return read_only("'kill -l/-0' only lists signals or checks a process exists")
    return destructive("'kill' sends signals to processes")


def _tar(name: str, args: list[str]) -> list[Outcome]:
    words = _tar_old_style(args)
    parsed, found = judge_options("tar", words, TAR, why={"-I": "runs a compression program"})
    if found:
        return found
    archive = parsed.value("-f")
    if archive and ":" in archive.split("/", 1)[0] and not parsed.has("--force-local"):
        return mutating(f"'tar -f {archive}' reaches another host through rsh")
    target = parsed.value("-C")
    if parsed.has("-x") and target is not None and is_system_path(target):
        return destructive(f"'tar -x -C {target}' extracts into a system path")
    writes = [mode for mode in TAR_WRITE_MODES if parsed.has(mode)]
    if writes == ["-x"] and parsed.has("-O"):
        return read_only("'tar -xO' only prints archive members")
    if writes:
        return mutating("'tar' writes files or archives")
    if any(parsed.has(mode) for mode in TAR_READ_MODES) or parsed.has("-O"):
        return read_only("'tar -t' only lists an archive")
    return mutating("'tar' without a listing mode")


def _tar_old_style(args: list[str]) -> list[str]:
    """`tar tvf x.tar` → `-t -v -f x.tar`: old-style letters take their values in order."""
    if not args or args[0].startswith("-") or isinstance(args[0], RuntimeText):
        return args
    words: list[str] = []
    queue = list(args[1:])
    for letter in args[0]:
        option = TAR.short.get(f"-{letter}")
        words.append(f"-{letter}")
        if option is not None and option.takes == "value" and queue:
            words.append(queue.pop(0))
    return words + queue


def _unzip(name: str, args: list[str]) -> list[Outcome]:
    flags = "".join(a[1:] for a in args if a.startswith("-"))
    if "d" not in flags and any(mode in flags for mode in "lvtzZpc"):
        return read_only("'unzip -l' only lists an archive")
    return mutating("'unzip' extracts files")


def _iconv(name: str, args: list[str]) -> list[Outcome]:
    _, found = judge_options(name, args, ICONV)
    return found or read_only("'iconv' only converts to stdout")


def _crontab(name: str, args: list[str]) -> list[Outcome]:
    if "-r" in args:
        return destructive("'crontab -r' deletes the crontab")
    if "-l" in args and all(a in ("-l", "-u") or not a.startswith("-") for a in args):
        return read_only("'crontab -l' lists jobs")
    return mutating("'crontab' changes scheduled jobs")


def _shutdown(name: str, args: list[str]) -> list[Outcome]:
    if "-c" in args:
        return mutating("'shutdown -c' cancels a scheduled shutdown")
    return destructive(f"'{name}' shuts the host down")


def _init(name: str, args: list[str]) -> list[Outcome]:
    if args and args[0] in ("0", "6"):
        return destructive(f"'{name} {args[0]}' halts or reboots the host")
    return mutating(f"'{name}' changes the runlevel")


def change_rules() -> dict[str, ProgramRule]:
    rules: dict[str, ProgramRule] = {
        name: _always("destructive", reason) for name, reason in ALWAYS_DESTRUCTIVE.items()
    }
    rules.update({name: _always("mutating", r) for name, r in ALWAYS_MUTATING.items()})
    partitioners = ("fdisk", "parted", "sgdisk", "sfdisk", "gdisk", "cfdisk")
    rules.update(dict.fromkeys(partitioners, _partition_tool))
    rules["mkfs"] = _always("destructive", "creates a filesystem (erases the device)")
    rules.update(dict.fromkeys(("cp", "mv", "ln"), _copy_or_move))
    rules.update(dict.fromkeys(("chmod", "chown", "chgrp"), _recursive_owner))
    rules.update(dict.fromkeys(("init", "telinit"), _init))
    rules.update(dict.fromkeys(COMPRESSORS, _compressor))
    rules.update(
        {"rsync": _rsync, "tee": _tee, "kill": _kill, "tar": _tar, "unzip": _unzip,
         "iconv": _iconv, "crontab": _crontab, "shutdown": _shutdown}
    )  # fmt: skip
    return rules
