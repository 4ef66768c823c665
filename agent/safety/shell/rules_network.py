"""Rules for network commands: ip, ethtool, rdma, nmcli, netplan, firewalls, curl and wget."""

from __future__ import annotations

from agent.safety.shell.outcomes import (
    Outcome,
    Rule,
    destructive,
    mutating,
    read_only,
    read_options,
    word_set,
)
from agent.safety.shell.paths import is_harmless_sink, is_system_path
from agent.safety.shell.rules_launch import ip_netns_exec

IP_READ_ACTIONS = frozenset({"show", "list", "lst", "ls", "sh", "get", "help", "showdump"})
IP_VALUE_OPTIONS = frozenset({"-n", "-netns", "-f", "-family", "-l", "-loops", "-rc"})
ETHTOOL_QUERY_FLAGS = word_set(
    """-i --driver -k --show-features --show-offload -a --show-pause -g --show-ring -l
    --show-channels -S --statistics -m --dump-module-eeprom --module-info -P --show-permaddr -T
    --show-time-stamping -c --show-coalesce --show-fec --show-eee --show-priv-flags -d
    --register-dump -e --eeprom-dump -n -u --show-nfc --show-ntuple -x --show-rxfh-indir
    --show-rxfh --show-tunnels --show-module --show-pse --show-mm --show-cable-test -h --help
    --version --json -I --include-statistics --all-groups -Q --per-queue --debug"""
)
CURL_VALUE_OPTIONS = word_set(
    """-o --output -T --upload-file -d --data --data-raw --data-binary --data-urlencode --data-ascii
    -F --form --form-string -X --request -H --header -u --user -A --user-agent -e --referer -m
    --max-time --connect-timeout -w --write-out -x --proxy -b --cookie -c --cookie-jar -D
    --dump-header -K --config -r --range --retry --retry-delay --retry-max-time --cacert --cert
    --key --resolve --interface --json -E --limit-rate -y -Y --url --output-dir -z"""
)
CURL_SENDS = ("-d", "--data", "--data-raw", "--data-binary", "--data-urlencode", "--data-ascii",
              "-F", "--form", "--form-string", "-T", "--upload-file", "--json")  # fmt: skip
CURL_WRITES = ("-o", "--output", "-c", "--cookie-jar", "-D", "--dump-header")
WGET_VALUE_OPTIONS = word_set("-O --output-document -o --output-file -P --directory-prefix -T -e")
NMCLI_VALUE_OPTIONS = frozenset({"-f", "--fields", "-g", "--get-values", "-e", "--escape", "-c",
                                 "--colors", "-w", "--wait", "-m", "--mode"})  # fmt: skip
NMCLI_DESTRUCTIVE = frozenset({"down", "delete", "del", "disconnect", "off"})
NMCLI_READ = frozenset(
    {"show", "s", "status", "st", "list", "l", "monitor", "wifi", "general", "g"}
)


def _ip(name: str, args: list[str]) -> list[Outcome]:
    if name == "ifconfig":
        return _ifconfig(args)
    index = 0
    while index < len(args) and args[index].startswith("-"):
        if args[index] in ("-b", "-batch"):
            return mutating("'ip -batch' runs commands from a file")
        index += 2 if args[index] in IP_VALUE_OPTIONS else 1
    rest = args[index:]
    if nested := ip_netns_exec(rest):
        return nested
    if not rest:
        return mutating("'ip' without an object")
    obj = rest[0]
    action = rest[1] if len(rest) > 1 else "show"
    if action.startswith("-") or action in ("dev", "to", "from", "table", "scope"):
        action = "show"
    label = f"ip {obj} {action}"
    if action in IP_READ_ACTIONS or obj in ("monitor", "mon"):
        return read_only(f"'{label}' only reads")
    if action in ("del", "delete", "flush"):
        return destructive(f"'{label}' removes addresses, routes or links")
    if obj in ("link", "l") and action == "set" and "down" in rest:
        return destructive("'ip link set … down' takes an interface down")
    return mutating(f"'{label}' changes the network configuration")


def _ifconfig(args: list[str]) -> list[Outcome]:
    if "down" in args:
        return destructive("'ifconfig … down' takes an interface down")
    if len([a for a in args if not a.startswith("-")]) <= 1:
        return read_only("'ifconfig' only shows interfaces")
    return mutating("'ifconfig' changes an interface")


def _ethtool(name: str, args: list[str]) -> list[Outcome]:
    flags = [a for a in args if a.startswith("-")]
    unknown = [a for a in flags if a not in ETHTOOL_QUERY_FLAGS]
    if unknown:
        return mutating(f"'ethtool {unknown[0]}' changes the interface")
    return read_only("'ethtool' query only reads")


def _rdma(name: str, args: list[str]) -> list[Outcome]:
    words = [a for a in args if not a.startswith("-")]
    action = words[1] if len(words) > 1 else "show"
    if action in ("show", "list", "help"):
        return read_only(f"'rdma {' '.join(words[:2])}' only reads")
    return mutating(f"'rdma {' '.join(words[:2])}' changes RDMA devices")


def _nmcli(name: str, args: list[str]) -> list[Outcome]:
    parsed = read_options(args, NMCLI_VALUE_OPTIONS)
    words = parsed.positionals
    if any(w in NMCLI_DESTRUCTIVE for w in words[1:]):
        return destructive(f"'nmcli {' '.join(words[:2])}' takes a connection down or deletes it")
    if len(words) <= 1 or words[1] in NMCLI_READ:
        return read_only(f"'nmcli {' '.join(words[:2])}' only reads".replace(" '", "'"))
    return mutating(f"'nmcli {' '.join(words[:2])}' changes network connections")


def _netplan(name: str, args: list[str]) -> list[Outcome]:
    verb = next((a for a in args if not a.startswith("-")), "")
    if verb == "apply":
        return destructive("'netplan apply' reconfigures every interface (can cut the connection)")
    if verb in ("get", "status", "info", "help", ""):
        return read_only(f"'netplan {verb}' only reads")
    return mutating(f"'netplan {verb}' changes network configuration")


def _iptables(name: str, args: list[str]) -> list[Outcome]:
    if name.endswith("-save"):
        return read_only(f"'{name}' only prints rules")
    if name.endswith("-restore"):
        return destructive(f"'{name}' replaces the firewall rules")
    if any(a in ("-F", "--flush", "-X", "--delete-chain", "-D", "--delete") for a in args):
        return destructive(f"'{name}' flushes or deletes firewall rules")
    if "-P" in args or "--policy" in args:
        if any(a in ("DROP", "REJECT") for a in args):
            return destructive(f"'{name} -P … DROP' blocks traffic by default")
        return mutating(f"'{name} -P' changes a default policy")
    reading = ("-L", "--list", "-S", "--list-rules", "-n", "--numeric", "-v", "--verbose", "-t",
               "--table", "--line-numbers", "-x", "--exact", "-w", "--wait", "-h", "--help",
               "--version")  # fmt: skip
    words_ok = all(a in reading or not a.startswith("-") for a in args)
    if words_ok and any(
        a in ("-L", "--list", "-S", "--list-rules", "--version", "-h") for a in args
    ):
        return read_only(f"'{name} -L' only lists rules")
    return mutating(f"'{name}' changes firewall rules")


def _nft(name: str, args: list[str]) -> list[Outcome]:
    words = [a for a in args if not a.startswith("-")]
    if words[:1] == ["list"] or args in (["--version"], ["-v"]):
        return read_only("'nft list' only lists rules")
    if words[:1] and words[0] in ("flush", "delete", "destroy"):
        return destructive(f"'nft {words[0]}' removes firewall rules")
    return mutating("'nft' changes firewall rules")


def _ufw(name: str, args: list[str]) -> list[Outcome]:
    verb = next((a for a in args if not a.startswith("-")), "")
    if verb in ("status", "show", "version", "app"):
        return read_only(f"'ufw {verb}' only reads")
    if verb in ("disable", "reset", "delete"):
        return destructive(f"'ufw {verb}' removes firewall protection or rules")
    return mutating(f"'ufw {verb}' changes the firewall")


def _curl(name: str, args: list[str]) -> list[Outcome]:
    parsed = read_options(args, CURL_VALUE_OPTIONS)
    method = (parsed.options.get("-X") or parsed.options.get("--request") or "GET").upper()
    if method not in ("GET", "HEAD", "OPTIONS"):
        return mutating(f"'curl -X {method}' changes something on the server")
    if sent := next((o for o in CURL_SENDS if o in parsed.options), None):
        return mutating(f"'curl {sent}' sends data to the server")
    for option in CURL_WRITES:
        target = parsed.options.get(option)
        if target is not None and is_system_path(target):
            return destructive(f"'curl {option}' writes into system path {target}")
        if target is not None and not is_harmless_sink(target):
            return mutating(f"'curl {option}' writes {target}")
    if parsed.has(
        "-O", "--remote-name", "--remote-name-all", "-J", "--output-dir", "-K", "--config"
    ):
        return mutating("'curl -O' writes a file")
    return read_only("'curl' GET only reads")


def _wget(name: str, args: list[str]) -> list[Outcome]:
    parsed = read_options(args, WGET_VALUE_OPTIONS)
    if parsed.has("-e", "--execute"):
        return mutating("'wget -e' runs wgetrc commands")
    if any(a.startswith(("--post", "--method", "--body")) for a in args):
        return mutating("'wget --post' sends data to the server")
    if parsed.has("--spider"):
        return read_only("'wget --spider' only checks the URL")
    document = parsed.options.get("-O", parsed.options.get("--output-document"))
    if document is not None and is_harmless_sink(document):
        return read_only("'wget -O -' prints to stdout")
    if document is not None and is_system_path(document):
        return destructive(f"'wget -O' writes into system path {document}")
    return mutating("'wget' downloads a file")


def _route(name: str, args: list[str]) -> list[Outcome]:
    if any(a in ("del", "delete", "flush") for a in args):
        return destructive(f"'{name} del' removes routes or entries")
    if any(a in ("add", "-s", "--set", "change", "replace") for a in args):
        return mutating(f"'{name}' changes the routing or neighbour tables")
    return read_only(f"'{name}' only shows tables")


def network_rules() -> dict[str, Rule]:
    return {
        "ip": _ip,
        "ifconfig": _ip,
        "ethtool": _ethtool,
        "rdma": _rdma,
        "nmcli": _nmcli,
        "netplan": _netplan,
        "iptables": _iptables,
        "ip6tables": _iptables,
        "iptables-save": _iptables,
        "ip6tables-save": _iptables,
        "iptables-restore": _iptables,
        "ip6tables-restore": _iptables,
        "nft": _nft,
        "ufw": _ufw,
        "curl": _curl,
        "wget": _wget,
        "route": _route,
        "arp": _route,
    }
