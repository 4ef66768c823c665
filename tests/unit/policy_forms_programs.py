"""Generators of command forms for programs with their own language, options, endpoints and
devices (issue 25); see policy_forms.py for the shell's own classes."""

from __future__ import annotations

import itertools
from collections.abc import Iterator


def awk_forms() -> Iterator[str]:
    """awk statements that act outside the program, spaced and placed every way awk allows."""
    acts = ('system({s}"id")', '"id"{s}|{s}getline x', 'print{s}>{s}"/tmp/o"',
            'print $1{s}>>{s}"/tmp/o"', 'printf "x"{s}|{s}"sh"', 'print{s}|&{s}"/inet/tcp/0/h/80"',
            'getline x{s}<{s}"/inet/tcp/0/h/80"', 'f="system";{s}@f("id")',
            'print $1,{s}$2{s}>{s}"/tmp/o"')  # fmt: skip
    spaces = ("", " ", "\t", "  ")
    places = ("BEGIN{{{a}}}", "{{{a}}}", "END {{ {a} }}", '{{ s = "a;b}}"; {a} }}',
              "/x\\/y/ {{ {a} }}", "NR > 1 {{ n++; {a} }}")  # fmt: skip
    for act, space, place in itertools.product(acts, spaces, places):
        program = place.format(a=act.format(s=space))
        yield "awk '" + program.replace("'", "'\\''") + "' /etc/hosts"


def awk_reads() -> Iterator[str]:
    bodies = ("print", "print $1", 'print $1 ">" $2', "if ($3 > 5) print $1",
              "print ($1 > 5)", "sum += $2", "a[$1]++", 'printf "%s\\n", $1')  # fmt: skip
    for body, place in itertools.product(bodies, ("{{{b}}}", "NR>1 {{ {b} }}", "END {{ {b} }}")):
        yield "awk '" + place.format(b=body) + "' /etc/hosts"


def sed_forms() -> Iterator[str]:
    acts = ("w /tmp/o", "W /tmp/o", "e id", "s/a/b/w /tmp/o", "s/a/b/e", "s|a|b|gw /tmp/o")
    addresses = ("", "1", "/x/", "$", "1,3", "0~2")
    for act, address, prefix in itertools.product(acts, addresses, ("", "p;", "n;")):
        yield f"sed -n '{prefix}{address}{act}' /etc/hosts"


def tmux_forms() -> Iterator[str]:
    reads = ("ls", "list-sessions", "list-windows -a", "has-session -t x", "show-options -g")
    acts = (
        "kill-server",
        "kill-session -t x",
        "run-shell id",
        "source-file /tmp/x",
        "send-keys -t x 'rm -rf /x' Enter",
        "new-window id",
        "set-option -g x y",
    )
    separators = (" \\; ", " ';' ", "\\; ")  # the last ends the word before it with ';'
    for read, act, separator in itertools.product(reads, acts, separators):
        yield f"tmux {read}{separator}{act}"


def find_forms() -> Iterator[str]:
    tests = ("", "-name '*.log'", "-type f -mtime +7", "-maxdepth 2 -zzz")
    acts = ("-delete", "-exec rm {} \\;", "-execdir rm {} +", "-ok rm {} \\;",
            "-fprint /tmp/o", "-fls /tmp/o", "-fprintf /tmp/o %p")  # fmt: skip
    for test, act in itertools.product(tests, acts):
        yield f"find /data {test} {act}".replace("  ", " ")


def netns_exec_forms() -> Iterator[str]:
    for netns, verb, every in itertools.product(("net", "netn", "netns"), ("e", "ex", "exec"),
                                                ("", "-a", "-all")):  # fmt: skip
        name = "" if every else "ns1 "
        yield f"ip {every} {netns} {verb} {name}rm -rf /data".replace("  ", " ")


def git_config_forms() -> Iterator[str]:
    keys = ("core.pager=id", "core.fsmonitor=id", "alias.log=!id", "core.sshCommand=id",
            "diff.external=id", "safe.directory=*", "include.path=/tmp/x", "core.hooksPath=/x",
            "CORE.PAGER=id", "Core.FsMonitor=id", "pager.log=id")  # fmt: skip
    for key, verb in itertools.product(keys, ("log", "status", "diff", "show HEAD")):
        yield f"git -c {key} {verb}"


def ssh_option_forms() -> Iterator[str]:
    settings = ("ProxyCommand{s}id", "LocalCommand{s}id", "KnownHostsCommand{s}id",
                "RemoteCommand{s}id", "SetEnv{s}X=1", "SendEnv{s}LD_PRELOAD",
                "LocalForward{s}8080:x:80", "ForwardAgent{s}yes", "ControlMaster{s}yes",
                "PKCS11Provider{s}/tmp/x.so", "proxycommand{s}id", "PROXYCOMMAND{s}id")  # fmt: skip
    for setting, sep, attached in itertools.product(settings, ("=", " "), (True, False)):
        option = setting.format(s=sep)
        spelled = f"'-o{option}'" if attached else f"-o '{option}'"
        yield f"ssh {spelled} spark-b nvidia-smi -L"


def nmcli_forms() -> Iterator[str]:
    """Every prefix nmcli resolves to a destructive verb, on every prefix of its object."""
    objects = {"connection": ("down", "delete"), "device": ("down", "disconnect", "delete")}
    for obj, verbs in objects.items():
        for cut, verb in itertools.product(range(1, len(obj) + 1), verbs):
            for length in range(1, len(verb) + 1):
                yield f"nmcli {obj[:cut]} {verb[:length]} eth0"
    for cut in range(1, len("networking") + 1):
        yield f"nmcli {'networking'[:cut]} off"
    for cut, radio in itertools.product(range(1, len("radio") + 1), ("all", "wifi", "wwan")):
        yield f"nmcli {'radio'[:cut]} {radio} off"


def unknown_option_forms() -> Iterator[tuple[str, str]]:
    """(destructive command, unknown option) with the option put at every place in it."""
    commands = (
        "kubectl delete pod vllm-0",
        "kubectl drain node1",
        "systemctl stop docker",
        "docker rm -f vllm_node",
        "docker rmi nvcr.io/x",
        "systemctl restart docker",
    )
    options = ("--force", "--grace-period=0", "--zzz", "-Z", "--now-please")
    for command, option in itertools.product(commands, options):
        words = command.split()
        for at in range(1, len(words) + 1):
            yield " ".join([*words[:at], option, *words[at:]]), option


LOADING_READS = ("sysctl -f {f}", "sysctl -p {f}", "sysctl --load={f}", "sysctl --system")
WRITING_READS = ("iptables-save -f {f}", "ip6tables-save --file={f}",
                 "apt-cache -p {f} show vllm", "apt-cache --pkg-cache={f} policy",
                 "sort -o {f} /etc/hosts", "journalctl --cursor-file={f}",
                 "tree -o {f} /data")  # fmt: skip


def endpoint_forms() -> Iterator[str]:
    hosts = ("evil.example.com", "10.9.9.9", "169.254.169.254", "localhost.evil.com",
             "127.0.0.1.nip.io", "[2001:db8::1]", "user@localhost")  # fmt: skip
    forms = ("curl -s http://{h}/", "curl -sI https://{h}:8443/x", "wget -qO- http://{h}/",
             "docker -H tcp://{h}:2375 ps", "docker --host=tcp://{h} images",
             "kubectl -s https://{h}:6443 get pods", "kubectl --server=https://{h} get nodes",
             "HTTPS_PROXY=http://{h}:3128 curl http://localhost:8000/health",
             "DOCKER_HOST=tcp://{h}:2375 docker ps", "HF_ENDPOINT=http://{h} hf cache scan",
             "curl -x http://{h}:3128 http://localhost:8000/health",
             "env no_proxy= http_proxy=http://{h} curl http://127.0.0.1/")  # fmt: skip
    for form, host in itertools.product(forms, hosts):
        yield form.format(h=host)


SERVING = {
    8265: ("/api/actors/kill?actor_id=1", "/api/jobs/x/stop", "/api/v0/logs/file"),
    8000: ("/sleep", "/wake_up", "/reset_prefix_cache", "/collective_rpc", "/stop_profile"),
    30000: ("/flush_cache", "/update_weights_from_disk", "/abort_request", "/shutdown"),
}
READ_ENDPOINTS = ("/health", "/v1/models", "/metrics", "/version")


def serving_forms() -> Iterator[str]:
    for (port, paths), host in itertools.product(SERVING.items(), ("localhost", "127.0.0.1")):
        for path, client in itertools.product(paths, ("curl -s", "curl -sf -X GET", "wget -qO-")):
            yield f"{client} http://{host}:{port}{path}"


def device_forms() -> Iterator[str]:
    devices = ("/dev/watchdog", "/dev/watchdog0", "/dev/mem", "/dev/sda", "/dev/nvidia0",
               "/dev/ipmi0", "/dev/kmsg", "/proc/kmsg")  # fmt: skip
    spellings = ("{d}", "/{d}", "{dir}/./{base}", "/tmp/..{d}", "{dir}//{base}", "$(echo {d})",
                 "`echo {d}`", "{dir}/{base}*", "x={d}; {{}}", "cd {dir} && {{}}")  # fmt: skip
    readers = ("cat {p}", "head -c1 {p}", "tail -n1 {p}", "od -An {p}", "xxd {p}", "strings {p}",
               "grep x {p}", "wc -c < {p}", "cat < {p}", "hexdump -C {p}")  # fmt: skip
    for device, spelling, reader in itertools.product(devices, spellings, readers):
        directory, base = device.rsplit("/", 1)
        path = spelling.format(d=device, dir=directory, base=base)
        if path.startswith("x="):  # the path through a variable set earlier on the line
            yield path.replace("{}", reader.format(p="$x"))
        elif path.startswith("cd "):  # a relative path after a literal cd
            yield path.replace("{}", reader.format(p=base))
        else:
            yield reader.format(p=path)
    disk_tools = ("blkid {p}", "file -s {p}", "fdisk -l {p}", "grep --file={p} x")
    for device, tool in itertools.product(devices, disk_tools):
        if device != "/dev/sda":  # a disk: disk tools may open it
            yield tool.format(p=device)


def restart_forms() -> Iterator[str]:
    units = ("docker", "containerd", "nvidia-persistenced", "nvidia-fabricmanager",
             "nvidia-fabricmanager.service", "networking", "systemd-networkd", "NetworkManager",
             "kubelet", "crio", "nginx")  # fmt: skip
    verbs = ("restart", "try-restart", "reload-or-restart", "try-reload-or-restart",
             "force-reload")  # fmt: skip
    forms = (
        "systemctl {v} {u}",
        "sudo systemctl {v} {u}",
        "systemctl --no-block {v} {u}",
        "sudo -n systemctl {v} {u}.service",
        "service {u} {v}",
        "/etc/init.d/{u} {v}",
    )
    for form, unit, verb in itertools.product(forms, units, verbs):
        if form.startswith(("service", "/etc")) and verb.startswith("try-reload"):
            continue
        yield form.format(v=verb, u=unit)
