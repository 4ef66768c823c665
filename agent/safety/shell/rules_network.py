"""Rules for the network stack: ip, ethtool, rdma, nmcli, netplan, firewalls, sockets, InfiniBand.

Their read forms (`ip addr show`, `ethtool -i DEV`, `nft list ruleset`, `ss -tlnp`) are
read-only; anything that sets, adds, deletes or flushes changes how the host talks to others.
"""

from __future__ import annotations

from agent.safety.shell.abbreviations import (
    iproute2_object,
    iproute2_subverb,
    iproute2_takes_subverb,
    iproute2_verb,
    nmcli_path,
)
from agent.safety.shell.options import grammar, word_set
from agent.safety.shell.outcomes import (
    Outcome,
    ProgramRule,
    RunsCommand,
    destructive,
    judge_options,
    mutating,
    option_effects,
    read_only,
    reader,
    understood,
)
from agent.safety.shell.shell_words import RuntimeText

# ip's verbs (full names, as abbreviations.ip_verb expands them) that only read.
IP_READ_ACTIONS = frozenset({"show", "list", "lst", "get", "help", "showdump"})
IP_READ_PAIRS = frozenset({("netns", "identify"), ("netns", "pids"), ("netns", "list-id"),
                           ("vrf", "identify"), ("vrf", "pids"),
                           # ip/ipmptcp.c mptcp_monitor: joins the PM's event group and prints
                           ("mptcp", "monitor")})  # fmt: skip
# Words after the object that ip's list commands read as a filter (`ip addr dev eth0`).
IP_LIST_FILTERS = frozenset({"dev", "to", "from", "table", "scope", "up"})
# ip accepts any prefix of its global options (`-d`, `-det`, `-details`); `-b` is -batch.
IP_OPTIONS: dict[str, str] = {}
for _word, _kind in (
    ("-Version", "flag"),
    ("-human-readable", "flag"),
    ("-stats", "flag"),
    ("-details", "flag"),
    ("-resolve", "flag"),
    ("-iec", "flag"),
    ("-oneline", "flag"),
    ("-timestamp", "flag"),
    ("-tshort", "flag"),
    ("-all", "flag"),
    ("-color", "flag"),
    ("-json", "flag"),
    ("-pretty", "flag"),
    ("-Numeric", "flag"),
    ("-brief", "flag"),
    ("-netns", "value"),
    ("-family", "value"),
    ("-loops", "value"),
    ("-rcvbuf", "value"),
    ("-force", "batch"),
    ("-batch", "batch"),
):
    for _end in range(2, len(_word) + 1):
        IP_OPTIONS.setdefault(_word[:_end], _kind)
IP_OPTIONS.update({"-4": "flag", "-6": "flag", "-0": "flag", "-B": "flag", "-M": "flag",
                   "-I": "flag", "-D": "flag", "-statistics": "flag", "-ts": "flag",
                   "-b": "batch", "-br": "flag", "-f": "value", "-n": "value"})  # fmt: skip
ETHTOOL_QUERY_FLAGS = word_set(
    """-i --driver -k --show-features --show-offload -a --show-pause -g --show-ring -l
    --show-channels -S --statistics -m --dump-module-eeprom --module-info -P --show-permaddr -T
    --show-time-stamping -c --show-coalesce --show-fec --show-eee --show-priv-flags -d
    --register-dump -e --eeprom-dump -n -u --show-nfc --show-ntuple -x --show-rxfh-indir
    --show-rxfh --show-tunnels --show-module --show-pse --show-mm --show-cable-test -h --help
    --version --json -I --include-statistics --all-groups -Q --per-queue --debug"""
)
RDMA_OPTIONS = frozenset({"-V", "-Version", "-d", "-details", "-j", "-json", "-p", "-pretty",
                          "-r", "-raw", "-n", "-netns"})  # fmt: skip
NMCLI = grammar(
    "-f|--fields= -g|--get-values= -e|--escape= -c|--colors= -w|--wait= -m|--mode= -t|--terse "
    "-p|--pretty -a|--ask -s|--show-secrets -o|--overview -h|--help -v|--version",
    stop_at_positional=True,
)
NMCLI_SHOW = grammar("--active --order= --show-secrets -s -a")
NMCLI_DESTRUCTIVE = frozenset({"down", "delete", "disconnect", "off"})
# Verb paths (nmcli's full names, see abbreviations.nmcli_path) that only read.
NMCLI_READ = frozenset(
    {("", ), ("general", "status"), ("general", "hostname"), ("general", "permissions"),
     ("general", "logging"), ("networking", ""), ("networking", "connectivity"),
     ("radio", "all"), ("radio", "wifi"), ("radio", "wwan"), ("connection", "show"),
     ("connection", "monitor"), ("device", "status"), ("device", "show"),
     ("device", "monitor"), ("device", "lldp", "list"), ("monitor",)}
)  # fmt: skip
NMCLI_NO_ARGS = frozenset({"hostname", "logging", "all", "wifi", "wwan"})
NFT = grammar(
    "-a|--handle -c|--check -d|--debug= -e|--echo -f|--file=:x -i|--interactive:x "
    "-I|--includepath= -j|--json -n|--numeric -N|--reversedns -s|--stateless -S|--service "
    "-t|--terse -u|--guid -T|--numeric-time -y|--numeric-priority -p|--numeric-protocol "
    "-o|--optimize -v|--version -V -h|--help"
)
IPTABLES_SAVE = grammar("-M|--modprobe=:x -c|--counters -t|--table= -f|--file=:w -V|--version "
                        "-h|--help")  # fmt: skip
IPTABLES = grammar(
    "-L|--list -S|--list-rules -n|--numeric -v|--verbose -t|--table= --line-numbers "
    "-x|--exact -w|--wait -W|--wait-interval= -4|--ipv4 -6|--ipv6 -h|--help -V|--version "
    "-Z|--zero:m -F|--flush:d -X|--delete-chain:d -D|--delete=:d -P|--policy=:m -A|--append=:m "
    "-I|--insert=:m -R|--replace=:m -N|--new-chain=:m -E|--rename-chain=:m "
    "--modprobe=:x -M=:x"
)
SS = grammar(
    "-h|--help -V|--version -H|--no-header -n|--numeric -r|--resolve -a|--all -l|--listening "
    "-o|--options -e|--extended -m|--memory -p|--processes -T|--threads -i|--info -s|--summary "
    "-E|--events -Z|--context -z|--contexts -b|--bpf -4|--ipv4 -6|--ipv6 -0|--packet -t|--tcp "
    "-u|--udp -d|--dccp -w|--raw -x|--unix -S|--sctp -M|--mptcp --tipc --vsock --xdp --tos "
    "--cgroup --tipcinfo --inet-sockopt -O|--oneline -Q|--no-queues --bpf-maps --bpf-map-id= "
    "-N|--net= -f|--family= -A|--query|--socket= -F|--filter= -D|--diag=:w -K|--kill:d"
)
NETSTAT = grammar(
    "-r|--route -i|--interfaces -g|--groups -s|--statistics -M|--masquerade -a|--all "
    "-l|--listening -n|--numeric --numeric-hosts --numeric-ports --numeric-users -p|--program "
    "-c|--continuous -e|--extend -o|--timers -t|--tcp -u|--udp -w|--raw -x|--unix -A|--protocol= "
    "-v|--verbose -W|--wide -C -F -N -Z|--context -4 -6 -V|--version -h|--help"
)
IB_TOOLS = {
    "ibstat": grammar(
        "-d|--debug -l|--list_of_cas -s|--short -p|--port_list -V|--version "
        "-h|--help -C|--Ca= -P|--Port= -D|--GUID"
    ),
    "ibstatus": grammar("-h"),
    "ibdev2netdev": grammar("-v -h"),
    "ibv_devinfo": grammar("-d|--ib-dev= -i|--ib-port= -l|--list -v|--verbose -h|--help"),
    "ibv_devices": grammar("-h|--help"),
    "show_gids": grammar("-h"),
    "iblinkinfo": grammar(
        "-d -l -p -S= -D= -C= -P= -v -h -V -R --load-cache= -G --switch= "
        "--all --line --port-guid --switches-only --cas-only -g"
    ),
}


def _ip(name: str, args: list[str]) -> list[Outcome]:
    index, every_netns = 0, False
    while index < len(args) and args[index].startswith("-"):
        option = args[index][1:] if args[index].startswith("--") else args[index]
        kind = IP_OPTIONS.get(option.split("=", 1)[0])
        if kind is None:
            return mutating(f"'ip': option {args[index]} is not known to be harmless")
        if kind == "batch":
            return mutating("'ip -batch/-force' runs commands from a file")
        every_netns = every_netns or ("-all".startswith(option) and len(option) > 1)
        index += 2 if kind == "value" else 1
    rest = args[index:]
    if _is_netns_exec(rest):  # ip matches prefixes: `ip net e NS cmd`; `-all` takes no NS
        command = rest[2:] if every_netns else rest[3:]
        where = "every netns" if every_netns else (rest[2] if len(rest) > 2 else "?")
        if not command:
            return mutating("'ip netns exec' without a command")
        return [RunsCommand(tuple(command), f"ip netns exec {where}")]
    if not rest:
        return mutating("'ip' without an object")
    if any(isinstance(word, RuntimeText) for word in rest[:2]):
        return mutating("'ip' object or action only known at run time")
    obj = iproute2_object("ip", rest[0])
    if obj is None:
        return mutating(f"'ip {rest[0]}' is not an object ip is known to read")
    if obj == "monitor":
        return read_only("'ip monitor' only reads")
    word = rest[1] if len(rest) > 1 else "show"
    if word.startswith("-") or word in IP_LIST_FILTERS:
        word = "show"
    verb = iproute2_verb("ip", obj, word)
    if verb is not None and iproute2_takes_subverb("ip", obj, verb):
        return _ip_subverb(obj, verb, rest[2:])
    label = f"ip {obj} {word if verb is None else verb}"
    if verb in IP_READ_ACTIONS or (obj, verb) in IP_READ_PAIRS:
        return read_only(f"'{label}' only reads")
    if verb in ("delete", "remove", "flush"):
        return destructive(f"'{label}' removes addresses, routes, links or their metrics")
    if obj == "link" and verb in ("set", "change") and "down" in rest:
        return destructive("'ip link set … down' takes an interface down")
    return mutating(f"'{label}' changes the network configuration")


def _ip_subverb(obj: str, verb: str, after: list[str]) -> list[Outcome]:
    """`ip mptcp endpoint show`, `ip sr tunsrc set`: the verb's block tests the next word
    again (abbreviations.iproute2_subverb, from ip's own source), and that word decides."""
    if after and isinstance(after[0], RuntimeText):
        return mutating(f"'ip {obj} {verb}': its action is only known at run time")
    sub = iproute2_subverb("ip", obj, verb, after[0] if after else None)
    label = f"ip {obj} {verb} {sub or (after[0] if after else '')}".rstrip()
    if sub in IP_READ_ACTIONS:
        return read_only(f"'{label}' only reads")
    if sub in ("delete", "remove", "flush"):
        return destructive(f"'{label}' removes addresses, routes, links or their metrics")
    return mutating(f"'{label}' changes the network configuration")


def _is_netns_exec(words: list[str]) -> bool:
    """`ip net e NS cmd` is `ip netns exec`: both words expand by ip's own tables."""
    if len(words) < 2 or isinstance(words[0], RuntimeText) or isinstance(words[1], RuntimeText):
        return len(words) >= 2
    obj = iproute2_object("ip", words[0])
    return obj == "netns" and iproute2_verb("ip", obj, words[1]) == "exec"


def _ifconfig(name: str, args: list[str]) -> list[Outcome]:
    if "down" in args:
        return destructive("'ifconfig … down' takes an interface down")
    if len([a for a in args if not a.startswith("-")]) <= 1 and all(
        a in ("-a", "-s", "-v") or not a.startswith("-") for a in args
    ):
        return read_only("'ifconfig' only shows interfaces")
    return mutating("'ifconfig' changes an interface")


def _ethtool(name: str, args: list[str]) -> list[Outcome]:
    if len(args) == 1:
        return read_only("'ethtool DEV' only shows the link settings")
    flags = [a for a in args if a.startswith("-") or isinstance(a, RuntimeText)]
    unknown = [a for a in flags if a not in ETHTOOL_QUERY_FLAGS]
    if unknown:
        return mutating(f"'ethtool {unknown[0]}' is not a known query (it may change the link)")
    return read_only("'ethtool' query only reads")


def _rdma(name: str, args: list[str]) -> list[Outcome]:
    options = [a for a in args if a.startswith("-")]
    if any(a in ("-b", "-batch", "-force") for a in options):
        return mutating("'rdma -batch' runs commands from a file")
    if any(a not in RDMA_OPTIONS for a in options):
        return mutating(f"'rdma': option {options[0]} is not known to be harmless")
    words = [a for a in args if not a.startswith("-")]
    action = words[1] if len(words) > 1 else "show"
    if action in ("show", "list", "help") or words[:1] == ["monitor"]:
        return read_only(f"'rdma {' '.join(words[:2])}' only reads")
    return mutating(f"'rdma {' '.join(words[:2])}' changes RDMA devices")


def _nmcli(name: str, args: list[str]) -> list[Outcome]:
    """nmcli runs the first entry of its own table, in order, that a word is a prefix of
    (`nmcli c m` is `connection modify`); only allow-listed verb paths read."""
    parsed, found = judge_options(name, args, NMCLI)
    if found:
        return found
    words = parsed.rest
    if any(isinstance(w, RuntimeText) for w in words):
        return mutating("'nmcli' object or verb only known at run time")
    path, tail, known = nmcli_path(words)
    label = " ".join(["nmcli", *path]).strip()
    if not known:
        return mutating(f"'{label}' is not a verb nmcli is known to read")
    if path[-1] in NMCLI_DESTRUCTIVE or (path[0] in ("radio", "networking") and "off" in tail):
        return destructive(f"'{label}' takes a connection, device or radio down or deletes it")
    if path not in NMCLI_READ or (path[-1] in NMCLI_NO_ARGS and tail):
        return mutating(f"'{label}' changes network connections")
    _, found = judge_options(name, tail, NMCLI_SHOW)
    return found or read_only(f"'{label}' only reads")


def _netplan(name: str, args: list[str]) -> list[Outcome]:
    verb = next((a for a in args if not a.startswith("-")), "")
    if verb == "apply":
        return destructive("'netplan apply' reconfigures every interface (can cut the connection)")
    if verb in ("get", "status", "info", "help", ""):
        return read_only(f"'netplan {verb}' only reads")
    return mutating(f"'netplan {verb}' changes network configuration")


def _iptables(name: str, args: list[str]) -> list[Outcome]:
    if name.endswith("-save"):
        _, found = judge_options(
            name, args, IPTABLES_SAVE, why={"-f": "writes the rules to a file"}
        )
        return found or read_only(f"'{name}' only prints rules")
    if name.endswith("-restore"):
        return destructive(f"'{name}' replaces the firewall rules")
    if any(a in ("-F", "--flush", "-X", "--delete-chain", "-D", "--delete") for a in args):
        return destructive(f"'{name}' flushes or deletes firewall rules")
    if "-P" in args or "--policy" in args:
        if any(a in ("DROP", "REJECT") for a in args):
            return destructive(f"'{name} -P … DROP' blocks traffic by default")
        return mutating(f"'{name} -P' changes a default policy")
    parsed, found = judge_options(name, args, IPTABLES)
    if found:
        return found
    if parsed.has("-L", "-S", "--version", "-h") and len(parsed.positionals) <= 2:
        return read_only(f"'{name} -L' only lists rules")
    return mutating(f"'{name}' changes firewall rules")


def _nft(name: str, args: list[str]) -> list[Outcome]:
    parsed, problems = understood(name, args, NFT)
    if problems:
        return problems
    if parsed.has("-c"):
        return read_only("'nft -c' only checks the rules")
    why = {"-f": "runs the rules in a file", "-i": "reads commands interactively"}
    if found := option_effects(name, parsed, why):
        return found
    text = " ".join(parsed.positionals).replace("\n", ";")
    commands = [part.split() for part in text.split(";") if part.strip()]
    if not commands:
        return read_only("'nft' without a command only prints")
    verbs = [command[0] for command in commands]
    if all(verb == "list" for verb in verbs):
        return read_only("'nft list' only lists rules")
    if any(verb in ("flush", "delete", "destroy") for verb in verbs):
        return destructive("'nft flush/delete' removes firewall rules")
    return mutating("'nft' changes firewall rules")


def _ufw(name: str, args: list[str]) -> list[Outcome]:
    verb = next((a for a in args if not a.startswith("-")), "")
    if verb in ("status", "show", "version", "app"):
        return read_only(f"'ufw {verb}' only reads")
    if verb in ("disable", "reset", "delete"):
        return destructive(f"'ufw {verb}' removes firewall protection or rules")
    return mutating(f"'ufw {verb}' changes the firewall")


def _route(name: str, args: list[str]) -> list[Outcome]:
    if any(a in ("del", "delete", "flush", "-d") for a in args):
        return destructive(f"'{name} del' removes routes or entries")
    if any(a in ("add", "-s", "--set", "change", "replace", "-f") for a in args):
        return mutating(f"'{name}' changes the routing or neighbour tables")
    if all(a in ("-n", "-e", "-ee", "-v", "-a", "-A", "inet", "inet6", "-4", "-6") or
           not a.startswith("-") for a in args):  # fmt: skip
        return read_only(f"'{name}' only shows tables")
    return mutating(f"'{name}': an option is not known to be harmless")


def network_rules() -> dict[str, ProgramRule]:
    rules: dict[str, ProgramRule] = {name: reader(spec) for name, spec in IB_TOOLS.items()}
    rules.update(
        {"ip": _ip, "ifconfig": _ifconfig, "ethtool": _ethtool, "rdma": _rdma, "nmcli": _nmcli,
         "netplan": _netplan, "nft": _nft, "ufw": _ufw, "route": _route, "arp": _route,
         "ss": reader(SS), "netstat": reader(NETSTAT)}
    )  # fmt: skip
    names = ("iptables", "ip6tables", "iptables-save", "ip6tables-save", "iptables-restore",
             "ip6tables-restore", "iptables-legacy", "iptables-nft")  # fmt: skip
    rules.update(dict.fromkeys(names, _iptables))
    return rules
