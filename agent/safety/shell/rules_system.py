"""Rules for looking at the system: hardware, processes, users, kernel, time and the host's name.

Most only read; the exceptions are options that set something (`date -s`, `hostname NAME`,
`sysctl -w`, `sensors -s`, `dmesg -C`) or write a file (`lshw -dump`, `dmidecode --dump-bin`,
`blkid -c`).
"""

from __future__ import annotations

from agent.safety.shell.options import grammar
from agent.safety.shell.outcomes import (
    Outcome,
    ProgramRule,
    destructive,
    judge_options,
    mutating,
    read_only,
    reader,
)
from agent.safety.shell.shell_words import RuntimeText

HV = "--help --version"
G = {
    "uname": grammar(
        "-a|--all -s|--kernel-name -n|--nodename -r|--kernel-release -v|--kernel-version "
        f"-m|--machine -p|--processor -i|--hardware-platform -o|--operating-system {HV}"
    ),
    "arch": grammar(HV),
    "uptime": grammar("-p|--pretty -s|--since -r|--raw -c|--container -h|--help -V|--version"),
    "whoami": grammar(HV),
    "id": grammar(
        "-a -Z|--context -g|--group -G|--groups -n|--name -r|--real -u|--user -z|--zero " + HV
    ),
    "groups": grammar(HV),
    "nproc": grammar(f"--all --ignore= {HV}"),
    "pwd": grammar("-L -P --help"),
    "free": grammar(
        "-b|--bytes -k|--kibi -m|--mebi -g|--gibi --tebi --pebi --kilo --mega --giga --tera "
        "--peta -h|--human --si -l|--lohi -L|--line -t|--total -c|--count= -s|--seconds= "
        "-w|--wide -v|--committed --help -V|--version"
    ),
    "lscpu": grammar(
        "-a|--all -b|--online -B|--bytes -c|--offline -C|--caches[=] -e|--extended[=] -J|--json "
        "-p|--parse[=] -s|--sysroot= -x|--hex -y|--physical --output-all -r|--raw --hierarchic[=] "
        "-h|--help -V|--version"
    ),
    "lspci": grammar(
        "-m -t -v -k -x -b -D -P -n -q -Q -M -G -s= -d= -i= -p= -A= -O= -H= -F= -C= -h --version "
        "--help"
    ),
    "lsblk": grammar(
        "-a|--all -b|--bytes -d|--nodeps -D|--discard -e|--exclude= -f|--fs -h|--help "
        "-I|--include= -i|--ascii -J|--json -l|--list -M|--merge -m|--perms -n|--noheadings "
        "-o|--output= -O|--output-all -p|--paths -P|--pairs -r|--raw -S|--scsi -N|--nvme "
        "-v|--virtio -s|--inverse -t|--topology -T|--tree[=] -V|--version -w|--width= "
        "-x|--sort= -y|--shell -z|--zoned -E|--dedup= -Q|--filter= --sysroot= --ct= "
        "--ct-filter= --highlight= --list-columns --properties-by= -A|--noempty --hyperlink[=]"
    ),
    "lsusb": grammar("-v|--verbose -s= -d= -D= -t|--tree -V|--version -h|--help"),
    "lsmod": grammar("-s|--syslog -v|--verbose -h|--help -V|--version"),
    "modinfo": grammar(
        "-a|--author -d|--description -l|--license -p|--parameters -n|--filename -0|--null "
        "-F|--field= -k= -b|--basedir= -V|--version -h|--help"
    ),
    "pgrep": grammar(
        "-d|--delimiter= -l|--list-name -a|--list-full -v|--inverse -w|--lightweight -c|--count "
        "-f|--full -g|--pgroup= -G|--group= -i|--ignore-case -n|--newest -o|--oldest "
        "-O|--older= -P|--parent= -s|--session= -t|--terminal= -u|--euid= -U|--uid= -x|--exact "
        "-F|--pidfile= -L|--logpidfile -r|--runstates= -A|--ignore-ancestors --cgroup= --ns= "
        "--nslist= --env= -h|--help -V|--version"
    ),
    "vmstat": grammar(
        "-a|--active -f|--forks -m|--slabs -n|--one-header -s|--stats -d|--disk -D|--disk-sum "
        "-p|--partition= -S|--unit= -t|--timestamp -w|--wide -y|--no-first -h|--help -V|--version"
    ),
    "iostat": grammar(
        "-c -d -h -k -m -N -s -t -V -x -y -z --dec= --human --pretty --compact -g= -H -j= -o= "
        "-p[=] -f= +f="
    ),
    "mpstat": grammar("-A -n -T -u -I= -N= -P= -o= --dec= -H -V"),
    "findmnt": grammar(
        "-A|--all -b|--bytes -C|--nocanonicalize -c|--canonicalize -D|--df -d|--direction= "
        "-e|--evaluate -F|--tab-file= -f|--first-only -i|--invert -J|--json -k|--kernel -l|--list "
        "-M|--mountpoint= -m|--mtab -N|--task= -n|--noheadings -O|--options= -o|--output= "
        "--output-all -P|--pairs -p|--poll[=] -R|--submounts -r|--raw --real --pseudo "
        "-S|--source= -s|--fstab -T|--target= -t|--types= -U|--uniq -u|--notruncate "
        "-v|--nofsroot -w|--timeout= -x|--verify --verbose --vfs-all --shadowed --list-columns "
        "-y|--shell -Q|--filter= --hyperlink[=] --id= --uniq-id= -I|--dfi -H -h|--help "
        "-V|--version"
    ),
    "blkid": grammar(
        "-c|--cache-file=:w -d|--no-encoding -g|--garbage-collect:m -h|--help -i|--info "
        "-k|--list-filesystems -l|--list-one -L|--label= -n|--match-types= -o|--output= "
        "-O|--offset= -p|--probe -s|--match-tag= -S|--size= -t|--match-token= -u|--usages= "
        "-U|--uuid= -V|--version -w|--write-cache=:w -D|--no-part-details -H|--hint="
    ),
    "lsns": grammar(
        "-J|--json -l|--list -n|--noheadings -o|--output= --output-all -p|--task= -r|--raw "
        "-t|--type= -u|--notruncate -W|--nowrap -Q|--filter= -P|--persistent -T|--tree[=] "
        "-H|--list-columns -h|--help -V|--version"
    ),
    "lsof": grammar(
        "-? -a -b -C -h -l -n -N -O -P -R -t -U -v -V -w -X -Q -K -M -c= -d= -D=:m -e= -E -F[=] "
        "-g[=] -i[=] -k= -L[=] -m= -o[=] -p= -r[=] -s[=] -S[=] -T[=] -u= -x[=] -z[=] -Z[=] +c= +d= "
        "+D= +f +L +m= +r= +w +E +M"
    ),
    "lshw": grammar(
        "-version -help -X -html -xml -json -short -businfo -dump=:w -class= -C= -c= -enable= "
        "-disable= -quiet -sanitize -numeric -notime",
        whole_words=True,
    ),
    "dmidecode": grammar(
        "-d|--dev-mem= -h|--help -q|--quiet -s|--string= -t|--type= -H|--handle= -u|--dump "
        "--dump-bin=:w --from-dump= --no-sysfs --no-quirks --oem-string= --list-strings "
        "--list-types -V|--version"
    ),
    "sensors": grammar(
        "-c|--config-file= -s|--set:m -h|--help -A|--no-adapter -u -j -f|--fahrenheit "
        "-v|--version --bus-list"
    ),
    "w": grammar(
        "-h|--no-header -u|--no-current -s|--short -f|--from -o|--old-style -i|--ip-addr "
        "-p|--pids -n|--no-truncat --help -V|--version"
    ),
    "who": grammar(
        "-a|--all -b|--boot -d|--dead -H|--heading --ips -l|--login --lookup -m -p|--process "
        "-q|--count -r|--runlevel -s|--short -t|--time -T|-w|--mesg|--message|--writable "
        f"-u|--users {HV}"
    ),
    "users": grammar(HV),
    "last": grammar(
        "-a|--hostlast -d|--dns -f|--file= -F|--fulltimes -i|--ip -n|--limit= -R|--nohostname "
        "-s|--since= -t|--until= -p|--present= -w|--fullnames -x|--system --time-format= "
        "-h|--help -V|--version",
        numeric=True,
    ),
    "locale": grammar(
        "-a|--all-locales -m|--charmaps -c|--category-name -k|--keyword-name -v|--verbose " + HV
    ),
    "getconf": grammar("-a -v="),
    "lsb_release": grammar(
        "-v|--version -i|--id -d|--description -r|--release -c|--codename -a|--all -s|--short "
        "-h|--help"
    ),
    "getent": grammar(
        "-s|--service= -i|--no-idn -A|--no-addrconfig -? --help --usage -V|--version"
    ),
    "lsattr": grammar("-R -V -a -d -l -p -v"),
    "printenv": grammar(f"-0|--null {HV}"),
    "tty": grammar(f"-s|--silent|--quiet {HV}"),
    "logname": grammar(HV),
    "hostid": grammar(HV),
    "tput": grammar("-T= -S -V -x"),
}
DATE = grammar(
    "-d|--date= --debug -f|--file= -I|--iso-8601[=] --resolution -R|--rfc-email --rfc-3339= "
    "-r|--reference= -s|--set=:m -u|--utc|--universal --help --version"
)
HOSTNAME = grammar(
    "-a|--alias -A|--all-fqdns -b|--boot:m -d|--domain -f|--fqdn|--long -F|--file=:m "
    "-i|--ip-address -I|--all-ip-addresses -s|--short -y|--yp|--nis -h|--help -V|--version"
)
DMESG = grammar(
    "-C|--clear:d -c|--read-clear:d -D|--console-off:m -E|--console-on:m -n|--console-level=:m "
    "-d|--show-delta -e|--reltime -F|--file= -f|--facility= -H|--human -J|--json -k|--kernel "
    "-L|--color[=] -l|--level= -P|--nopager -p|--force-prefix -r|--raw -S|--syslog "
    "-s|--buffer-size= -T|--ctime -t|--notime --time-format= -u|--userspace -w|--follow "
    "-W|--follow-new -x|--decode --noescape --since= --until= -h|--help -V|--version"
)
SYSCTL = grammar(
    "-a|-A|-X|--all -n|--values -e|--ignore -N|--names -q|--quiet -b|--binary -r|--pattern= -d "
    "-h|--help -V|--version -w|--write:m -p|-f|--load[=]:m --system:m"
)
TOP = grammar("-b -n= -d= -p= -u= -U= -o= -O= -w[=] -c -H -i -S -s -1 -E= -e= -h -v")


def _date(name: str, args: list[str]) -> list[Outcome]:
    parsed, found = judge_options(name, args, DATE, why={"-s": "sets the clock"})
    if found:
        return found
    if any(not p.startswith("+") or isinstance(p, RuntimeText) for p in parsed.positionals):
        return mutating("'date' with a date sets the clock")
    return read_only("'date' only prints the time")


def _hostname(name: str, args: list[str]) -> list[Outcome]:
    parsed, found = judge_options(name, args, HOSTNAME, why={"-F": "sets the name", "-b": "sets"})
    if found:
        return found
    if parsed.positionals:
        return mutating("'hostname NAME' sets the host's name")
    return read_only("'hostname' only prints the name")


def _sysctl(name: str, args: list[str]) -> list[Outcome]:
    parsed, found = judge_options(name, args, SYSCTL, why={"-w": "sets kernel parameters"})
    if found:
        return found
    if any("=" in p or isinstance(p, RuntimeText) for p in parsed.positionals):
        return mutating("'sysctl KEY=VALUE' sets kernel parameters")
    return read_only("'sysctl' only reads kernel parameters")


def _top(name: str, args: list[str]) -> list[Outcome]:
    parsed, found = judge_options(name, args, TOP)
    if found:
        return found
    if parsed.has("-b") and parsed.has("-n"):
        return read_only("'top -b -n' prints a snapshot")
    return mutating("'top' without -b -n is interactive and never ends")


def _dmesg(name: str, args: list[str]) -> list[Outcome]:
    _, found = judge_options(name, args, DMESG, why={"-C": "erases the kernel log",
                                                     "-c": "erases the kernel log"})  # fmt: skip
    return found or read_only("'dmesg' only reads the kernel log")


def _mount(name: str, args: list[str]) -> list[Outcome]:
    if all(a in ("-l", "--show-labels") for a in args):
        return read_only("'mount' without arguments lists mounts")
    return mutating("'mount' mounts a filesystem")


def _swapon(name: str, args: list[str]) -> list[Outcome]:
    if all(a in ("--show", "-s", "--summary", "--noheadings", "--bytes") for a in args):
        return read_only("'swapon --show' lists swap")
    return mutating("'swapon' enables swap")


def _modprobe(name: str, args: list[str]) -> list[Outcome]:
    if any(a in ("-r", "--remove") for a in args):
        return destructive("'modprobe -r' unloads a kernel module")
    if any(a in ("-n", "--dry-run", "-c", "--showconfig", "--show-depends", "-D") for a in args):
        return read_only("'modprobe' dry run only prints")
    return mutating("'modprobe' loads a kernel module")


def _systemd_show(tool: str, reads: frozenset[str]) -> ProgramRule:
    """hostnamectl / timedatectl: their status verbs read; every other verb sets something."""
    options = grammar(
        "-H|--host= -M|--machine= --no-ask-password --no-pager -a|--all -p|--property= --value "
        "--monitor --adjust-system-clock --transient --static --pretty -j --json= -h|--help "
        "--version"
    )

    def rule(name: str, args: list[str]) -> list[Outcome]:
        parsed, found = judge_options(name, args, options)
        if found:
            return found
        verb = parsed.positionals[0] if parsed.positionals else "status"
        if verb in reads and (len(parsed.positionals) <= 1 or verb.startswith(("list", "show"))):
            return read_only(f"'{tool} {verb}' only reads")
        return mutating(f"'{tool} {verb}' changes the system")

    return rule


def system_rules() -> dict[str, ProgramRule]:
    rules: dict[str, ProgramRule] = {name: reader(spec) for name, spec in G.items()}
    host_reads = frozenset({"status", "hostname", "icon-name", "chassis", "deployment",
                            "location", "help"})  # fmt: skip
    time_reads = frozenset({"status", "show", "list-timezones", "timesync-status",
                            "show-timesync", "help"})  # fmt: skip
    rules.update(
        {"date": _date, "hostname": _hostname, "sysctl": _sysctl, "top": _top, "dmesg": _dmesg,
         "mount": _mount, "swapon": _swapon, "modprobe": _modprobe,
         "hostnamectl": _systemd_show("hostnamectl", host_reads),
         "timedatectl": _systemd_show("timedatectl", time_reads)}
    )  # fmt: skip
    return rules
