"""Rules for programs that reach other hosts: curl, wget, DNS lookups, ping, traceroute.

A plain GET or a lookup only reads; sending data, writing what comes back to a file, loading
code (`curl --engine`, a config file of more options) or speaking a protocol other than HTTP
(`gopher://` sends raw bytes to any port) is mutating. The classifier adds one more check for
every program here: no expansion may feed its arguments, or a secret could leave in a URL or a
DNS name.
"""

from __future__ import annotations

import re

from agent.safety.shell.endpoints import endpoint_problem, url_problem
from agent.safety.shell.options import Parsed, grammar
from agent.safety.shell.outcomes import (
    Outcome,
    ProgramRule,
    Verdict,
    judge_options,
    mutating,
    option_effects,
    read_only,
    reader,
    understood,
    written_file,
)
from agent.safety.shell.paths import is_harmless_sink
from agent.safety.shell.shell_words import RuntimeText
from tools.risk.assessment import Risk

CURL = grammar(
    "-s|--silent -S|--show-error -f|--fail --fail-with-body --fail-early -L|--location "
    "--location-trusted -I|--head -i|--include -k|--insecure -v|--verbose --compressed "
    "-4|--ipv4 -6|--ipv6 -0|--http1.0 --http1.1 --http2 --http2-prior-knowledge --http3 "
    "--http3-only --http0.9 -g|--globoff -G|--get -N|--no-buffer -n|--netrc --netrc-optional "
    "--netrc-file= -#|--progress-bar --no-progress-meter -q|--disable -j|--junk-session-cookies "
    "-l|--list-only -R|--remote-time -Z|--parallel --parallel-immediate --parallel-max= "
    "-:|--next --raw --tr-encoding --path-as-is --tcp-nodelay --tcp-fastopen --no-keepalive "
    "--no-sessionid --no-alpn --no-npn --ssl-no-revoke --ssl-allow-beast --ssl-reqd --ssl "
    "-1|--tlsv1 --tlsv1.0 --tlsv1.1 --tlsv1.2 --tlsv1.3 --tls-max= --styled-output "
    "--no-styled-output --retry-all-errors --retry-connrefused --ignore-content-length "
    "--digest --basic --ntlm --negotiate --anyauth --proxy-anyauth --proxy-basic "
    "--proxy-digest --proxy-ntlm --proxy-insecure --false-start --ca-native --proxy-ca-native "
    "-M|--manual -h|--help -V|--version -m|--max-time= --connect-timeout= -H|--header= "
    "-A|--user-agent= -e|--referer= -u|--user= -U|--proxy-user= -x|--proxy= --noproxy= "
    "--resolve= --connect-to= --retry= --retry-delay= --retry-max-time= -r|--range= "
    "-w|--write-out= -Y|--speed-limit= -y|--speed-time= --limit-rate= --max-filesize= "
    "--max-redirs= --cacert= --capath= -E|--cert= --cert-type= --key= --key-type= --pass= "
    "--interface= --local-port= --dns-servers= --dns-interface= --dns-ipv4-addr= "
    "--dns-ipv6-addr= --url= --proto= --proto-redir= --proto-default= --ciphers= "
    "--tls13-ciphers= --expect100-timeout= --keepalive-time= --happy-eyeballs-timeout-ms= "
    "--unix-socket= --abstract-unix-socket= --oauth2-bearer= --request-target= --aws-sigv4= "
    "--socks4= --socks4a= --socks5= --socks5-hostname= --preproxy= --pinnedpubkey= "
    "--crlfile= -z|--time-cond= --delegation= --curves= -b|--cookie= --etag-compare= "
    "-X|--request= "
    "-d|--data=:m --data-raw=:m --data-binary=:m --data-urlencode=:m --data-ascii=:m "
    "-F|--form=:m --form-string=:m -T|--upload-file=:m --json=:m --url-query=:m "
    "--mail-from=:m --mail-rcpt=:m --mail-auth=:m -Q|--quote=:x -o|--output=:w "
    "-O|--remote-name:w --remote-name-all:w -J|--remote-header-name:w --output-dir=:w "
    "--create-dirs:m -D|--dump-header=:w -c|--cookie-jar=:w --trace=:w --trace-ascii=:w "
    "--libcurl=:w --stderr=:w --etag-save=:w --hsts=:w --alt-svc=:w --engine=:x -K|--config=:x"
)
CURL_WHY = {
    "-d": "sends data to the server",
    "-F": "sends a form",
    "-T": "uploads a file",
    "--json": "sends data to the server",
    "-K": "reads more options from a file",
    "--engine": "loads a crypto engine library",
    "-Q": "sends raw protocol commands",
}
SAFE_METHODS = frozenset({"GET", "HEAD", "OPTIONS"})
URL_SCHEME = re.compile(r"^([A-Za-z][A-Za-z0-9+.-]*)://")
GUESSED_SCHEMES = ("ftp.", "dict.", "ldap.", "imap.", "smtp.", "pop3.")
WGET = grammar(
    "-V|--version -h|--help -b|--background:m -e|--execute=:x --config=:x --no-config "
    "-o|--output-file=:w -a|--append-output=:w -d|--debug -q|--quiet -v|--verbose "
    "-n= --no-verbose --report-speed= -i|--input-file=:m -F|--force-html -B|--base= "
    "-t|--tries= --retry-connrefused --retry-on-http-error= -O|--output-document= "
    "--no-clobber -c|--continue:m --start-pos= --progress= --show-progress "
    "-N|--timestamping:m --no-if-modified-since --no-use-server-timestamps -S|--server-response "
    "--spider -T|--timeout= --dns-timeout= --connect-timeout= --read-timeout= -w|--wait= "
    "--waitretry= --random-wait --no-proxy -Q|--quota= --bind-address= --limit-rate= "
    "--no-dns-cache --restrict-file-names= -4|--inet4-only -6|--inet6-only --prefer-family= "
    "--user= --password= --ask-password --no-iri --local-encoding= --remote-encoding= "
    "--unlink:m -x|--force-directories:m -P|--directory-prefix=:w --cut-dirs= "
    "--http-user= --http-password= --no-cache --default-page= -E|--adjust-extension "
    "--ignore-length --header= --compression= --max-redirect= --proxy-user= "
    "--proxy-password= --referer= --save-headers --content-disposition --content-on-error "
    "-U|--user-agent= --save-cookies=:w --load-cookies= --keep-session-cookies "
    "--post-data=:m --post-file=:m --method= --body-data=:m --body-file=:m "
    "--auth-no-challenge --secure-protocol= --https-only --no-check-certificate "
    "--certificate= --certificate-type= --private-key= --private-key-type= --ca-certificate= "
    "--ca-directory= --crl-file= --pinnedpubkey= --random-file= --ciphers= --hsts-file= "
    "--no-hsts --warc-file=:w --rejected-log=:w -r|--recursive:m -l|--level= "
    "--delete-after:m -k|--convert-links:m -K|--backup-converted:m -m|--mirror:m "
    "-p|--page-requisites --strict-comments -A|--accept= -R|--reject= --accept-regex= "
    "--reject-regex= --regex-type= -D|--domains= --exclude-domains= --follow-ftp "
    "--follow-tags= --ignore-tags= -H|--span-hosts -L|--relative -I|--include-directories= "
    "-X|--exclude-directories= --no-parent --backups=:m --xattr"
)
DIG = grammar("-4 -6 -b= -c= -f=:m -h -k= -m -p= -q= -r -t= -u -v -x= -y=")
HOST = grammar("-a -A -c= -C -d -l -m= -n -N= -p= -r -R= -s -t= -T -U -v -V -w -W= -4 -6")
PING = grammar(
    "-a -A -b -B -c= -d -D -e= -f:m -h -i= -I= -l=:m -L -m= -M= -n -O -p= -q -Q= -r -R -s= -S= "
    "-t= -T= -U -v -V -w= -W= -4 -6 -C -H -N="
)
TRACEPATH = grammar("-4 -6 -b -l= -m= -n -p= -V")
TRACEROUTE = grammar(
    "-4 -6 -I|--icmp -T|--tcp -U|--udp -D|--dccp -P= -F|--dont-fragment -f|--first= "
    "-g|--gateway= -i|--interface= -m|--max-hops= -N|--sim-queries= -n -p|--port= -t|--tos= "
    "-l|--flowlabel= -w|--wait= -q|--queries= -r -s|--source= -z|--sendwait= -e|--extensions "
    "-A|--as-path-lookups -M|--module= -O|--options= --sport= --fwmark= --mtu --back "
    "-V|--version --help"
)
KEYSCAN = grammar("-4 -6 -c -D -H -p= -T= -t= -v -f=:m -O=")


def _url_problem(url: str, default_scheme: str) -> str | None:
    match = URL_SCHEME.match(url)
    scheme = match.group(1).lower() if match else default_scheme
    if not match and url.lower().startswith(GUESSED_SCHEMES):
        scheme = url.split(".", 1)[0].lower()
    if scheme not in ("http", "https"):
        return f"speaks {scheme}://, which can send arbitrary data"
    return None


def _curl(name: str, args: list[str]) -> list[Outcome]:
    parsed, problems = understood(name, args, CURL)
    if problems:
        return problems
    effects = option_effects(name, parsed, CURL_WHY)
    if parsed.has("-G") and not any(_reads_a_file(v) for v in _data_values(parsed)):
        effects = [e for e in effects if not _is_data_effect(e)]  # -G: the data is a URL query
    if effects:
        return effects
    method = (parsed.value("-X") or "GET").upper()
    if method not in SAFE_METHODS:
        return mutating(f"'curl -X {method}' changes something on the server")
    headers = parsed.values("-H", "--proxy-header")
    if any(h.startswith("@") for h in headers):
        return mutating("'curl -H @FILE' sends a file's contents as headers")
    for header in headers:  # a method the server takes from a header, not the request line
        name, _, value = header.partition(":")
        if name.strip().lower() in METHOD_HEADERS and value.strip().upper() not in SAFE_METHODS:
            return mutating(f"'curl -H {name.strip()}' asks the server for another method")
    if (target := parsed.value("--request-target")) is not None and not _plain_target(target):
        return mutating(f"'curl --request-target {target}' sends a request line the URL hides")
    if "%output{" in (parsed.value("-w") or ""):
        return mutating("'curl -w %output{…}' writes a file")
    default = (parsed.value("--proto-default") or "http").lower()
    for url in [*parsed.positionals, *parsed.values("--url")]:
        if problem := _url_problem(url, default) or url_problem(url):
            return mutating(f"'curl {url}' {problem}")
    for option in CURL_ROUTES:
        for value in parsed.values(option):
            if problem := endpoint_problem(value, f"'curl {option}' routes the request through"):
                return mutating(problem)
    if parsed.has("--resolve", "--connect-to"):
        return mutating("'curl --resolve/--connect-to' sends the request to another address")
    return read_only("'curl' GET to a loopback or inventory address only reads")


METHOD_HEADERS = frozenset({"x-http-method-override", "x-http-method", "x-method-override"})


def _plain_target(target: str) -> bool:
    """A request target that is only a path and query (origin-form, RFC 9112 §3.2.1): no
    absolute URL a proxy would forward, no authority, no `*`, nothing only known at run time."""
    return (
        not isinstance(target, RuntimeText)
        and target.startswith("/")
        and not target.startswith("//")
        and not any(c.isspace() or ord(c) < 32 for c in target)
    )


CURL_ROUTES = ("-x", "--preproxy", "--socks4", "--socks4a", "--socks5", "--socks5-hostname")
CURL_DATA = ("-d", "--data-raw", "--data-binary", "--data-urlencode", "--data-ascii")


def _data_values(parsed: Parsed) -> list[str]:
    return parsed.values(*CURL_DATA)


def _reads_a_file(value: str) -> bool:
    """`@FILE`, or `name@FILE` for --data-urlencode: the data comes from a file."""
    at, equals = value.find("@"), value.find("=")
    return isinstance(value, RuntimeText) or (at >= 0 and (equals < 0 or at < equals))


def _is_data_effect(outcome: Outcome) -> bool:
    return isinstance(outcome, Verdict) and any(
        f"curl {o}" in outcome.reason
        for o in ("--data", "--data-raw", "--data-binary", "--data-urlencode", "--data-ascii")
    )


def _wget(name: str, args: list[str]) -> list[Outcome]:
    parsed, found = judge_options(
        name, args, WGET, why={"-e": "runs wgetrc commands", "-i": "requests URLs read from a file"}
    )
    if found:
        return found
    method = (parsed.value("--method") or "GET").upper()
    if method not in SAFE_METHODS:
        return mutating(f"'wget --method={method}' changes something on the server")
    away = [
        Verdict(Risk.MUTATING, f"'wget {url}' {problem}")
        for url in parsed.positionals
        if (problem := _url_problem(url, "http") or url_problem(url))
    ]
    if parsed.has("--spider"):
        return away or read_only("'wget --spider' only checks the URL")
    document = parsed.value("-O")
    if document is not None and is_harmless_sink(document):
        return away or read_only("'wget -O -' prints to stdout")
    written = written_file("wget", document) if document else mutating("'wget' downloads a file")
    return [*away, *written]


def _dig(name: str, args: list[str]) -> list[Outcome]:
    words = [a for a in args if not a.startswith(("+", "@"))]
    _, found = judge_options(name, words, DIG, why={"-f": "looks up every line of a file"})
    return found or read_only("'dig' only looks names up")


def _nslookup(name: str, args: list[str]) -> list[Outcome]:
    return read_only("'nslookup' only looks names up")


def _ping(name: str, args: list[str]) -> list[Outcome]:
    parsed, found = judge_options(
        name, args, PING, why={"-f": "floods the network", "-l": "sends a burst of packets"}
    )
    if found:
        return found
    if parsed.has("-c", "-w"):
        return read_only("'ping -c' sends a few probes")
    return mutating("'ping' without -c never ends")


def net_client_rules() -> dict[str, ProgramRule]:
    return {
        "curl": _curl, "wget": _wget, "dig": _dig, "nslookup": _nslookup, "host": reader(HOST),
        "ping": _ping, "ping6": _ping, "tracepath": reader(TRACEPATH),
        "traceroute": reader(TRACEROUTE),
        "ssh-keyscan": reader(KEYSCAN, why={"-f": "contacts every host listed in a file"}),
    }  # fmt: skip
