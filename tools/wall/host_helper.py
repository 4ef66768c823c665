"""The wall's host side: run a command so the host's kernel, not a guess, keeps it read-only.

Scout sends this file and its siblings (host_landlock.py, host_seccomp.py, host_netfilter.py)
to a host once, into a folder named by their hash (tools/wall/command.py), and runs

    python3 -I -S -c LAUNCH FOLDER run SPEC -- PROGRAM ARGS...
    (SPEC: `ports=P,Q addrs=A,B scratch=1 limit=SECONDS`, `docker=1` for a call that uses
    docker, `dbus=1` for one that uses a D-Bus client, and `abi=N` to build an older
    kernel's wall)

(or `serve`: the fork-server of host_server.py, each of whose calls is a fork running `run`;
or `read-jobs`: the job status read of host_job_reader.py, run as a walled call)

`run` forks the command inside the wall and waits for it; the helper stays outside, so it can
end what the command leaves behind, and kill it at its time limit (exit 124, as GNU
timeout). The wall, all or nothing:

- capabilities: a root caller (login root, or `sudo -n` in front) keeps only the two that
  read (CAP_DAC_OVERRIDE, CAP_DAC_READ_SEARCH), in every set and the bounding set;
  no_new_privs, so no setuid program (sudo, su) gives any back;
- Landlock (host_landlock.py): no write but the scratch folder, sinks and GPU nodes; no device
  open beyond a short read-safe list; TCP only to named ports (ABI 4+); signals and abstract
  sockets scoped (ABI 6+);
- seccomp (host_seccomp.py): no Unix socket, netlink for reads only, no SysV IPC, message
  queue or key, IPv4/IPv6 only as TCP and only when ports are named;
- the address filter (host_netfilter.py): with ports named, connects only to loopback and the
  named addresses (cgroup BPF; root);
- docker (`docker=1`) and D-Bus (`dbus=1`): their sockets stay closed like every unix
  socket; the client reaches the daemon through a read-only proxy started outside the wall
  for the call (host_docker_proxy.py and host_docker_filter.py; host_dbus_proxy.py and
  host_dbus_filter.py), on a loopback port added to its ports;
- a PID namespace (root): the command is its init, so nothing it starts outlives it and no
  signal reaches a process outside it, on any Landlock ABI. Without root the helper is the
  child subreaper: what the command leaves running is killed when it ends.

When a part cannot be built the command does not run: the helper prints `@@scout-wall unwalled
REASON` on stdout and exits 199.

Why python3 and not a compiled helper: every host Scout manages (DGX OS, Ubuntu, Debian) ships
python3 with ctypes, on every architecture (a Spark is aarch64, an HGX node x86_64), so text
files serve all of them, can be read by an operator before they run, and need no compiler on
the host. The modules are imported, so the host's python caches their bytecode beside them:
a call pays the interpreter's start, not a compile; a call through the fork-server pays a
fork. Python 3.8+, standard library only.
"""

from __future__ import annotations

import ctypes
import os
import struct
import sys
from types import ModuleType  # ctypes imported it already

if __package__:  # inside Scout's tree
    from tools.wall import host_landlock, host_netfilter, host_seccomp
else:  # on a host: the sibling files in the helper's folder, which the launch line put first
    host_landlock = __import__("host_landlock")  # on sys.path (they are no packages of Scout's)
    host_netfilter = __import__("host_netfilter")
    host_seccomp = __import__("host_seccomp")
Unwalled = host_landlock.Unwalled

# what Scout reads as "not walled" (tools/wall/command.py reads the same two)
UNWALLED_STATUS = 199
UNWALLED_MARK = "@@scout-wall unwalled"
WALL_ENV = "SCOUT_WALL"  # what the command learns: the wall it runs in
NO_LANDLOCK = "no Landlock in this kernel (Linux 5.13+, with landlock in lsm=)"

PR_SET_PDEATHSIG, PR_SET_NO_NEW_PRIVS, PR_CAPBSET_DROP = 1, 38, 24
PR_SET_CHILD_SUBREAPER, PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL = 36, 47, 4
CAP_DAC_OVERRIDE, CAP_DAC_READ_SEARCH = 1, 2
KEPT_CAPS = (CAP_DAC_OVERRIDE, CAP_DAC_READ_SEARCH)
CAPABILITY_VERSION_3 = 0x20080522
CLONE_NEWPID = 0x20000000
SIGKILL, SIGALRM, ITIMER_REAL = 9, 14, 0
TIMED_OUT_STATUS = 124  # GNU timeout's, which the caller reads as "ran out of time"
# git config a repository (or the user) can set to run a program during a read: overridden in
# the command's environment (GIT_CONFIG_COUNT/KEY_n/VALUE_n, git-config(1), git 2.31+), which
# wins over every config file. Per-driver keys (diff.<driver>.textconv, filter.<driver>.*)
# have no one name to override: what they run, runs inside the wall (tools/wall/limits.py).
NEUTRAL_GIT = (
    ("core.fsmonitor", "false"), ("core.pager", "cat"), ("core.hooksPath", "/dev/null"),
    ("core.sshCommand", "false"), ("core.askPass", "false"), ("core.editor", "false"),
    ("sequence.editor", "false"), ("credential.helper", ""), ("gpg.program", "false"),
    ("protocol.allow", "never"), ("safe.bareRepository", "explicit"),
)  # fmt: skip

_libc = ctypes.CDLL(None, use_errno=True)


def landlock_abi() -> int:
    return host_landlock.landlock_abi()


def no_new_privs() -> None:
    if _libc.prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0:
        raise Unwalled("no_new_privs: " + os.strerror(ctypes.get_errno()))


def effective_caps() -> int:
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("CapEff:"):
                return int(line.split()[1], 16)
    return 0


def drop_root_powers() -> bool:
    """Keep only the reading capabilities, for good; False when there was nothing to drop."""
    if effective_caps() == 0:
        return False
    with open("/proc/sys/kernel/cap_last_cap") as f:
        last = int(f.read())
    for cap in range(last + 1):
        if cap not in KEPT_CAPS and _libc.prctl(PR_CAPBSET_DROP, cap, 0, 0, 0) != 0:
            raise Unwalled(f"dropping capability {cap}: {os.strerror(ctypes.get_errno())}")
    _libc.prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0)
    kept = sum(1 << cap for cap in KEPT_CAPS) & effective_caps()
    header = struct.pack("=Ii", CAPABILITY_VERSION_3, 0)
    data = struct.pack("=6I", kept, kept, 0, 0, 0, 0)  # effective, permitted, inheritable
    if _libc.capset(ctypes.c_char_p(header), ctypes.c_char_p(data)) != 0:
        raise Unwalled("capset: " + os.strerror(ctypes.get_errno()))
    return True


def build_wall(abi: int, scratch: str | None, ports: list[int], parts: list[str]) -> str:
    """Put the wall on this process; return how it is described to the command. `parts`: what
    the parent already built around it (the PID namespace, the address filter)."""
    if abi < 1:
        raise Unwalled(NO_LANDLOCK)
    if not host_seccomp.seccomp_available():
        raise Unwalled("no seccomp in this kernel")
    root = drop_root_powers()
    no_new_privs()
    host_landlock.landlock(abi, scratch, ports)
    refused = host_seccomp.install(bool(ports))
    if refused:
        raise Unwalled(refused)
    said = [f"landlock-abi-{abi}", "seccomp", "no-new-privs", *parts]
    if root:
        said.append("root-read-only")
    if ports:
        said.append("tcp-" + "-".join(str(p) for p in ports))
    return ",".join(said)


def neutralise_git(environ: os._Environ[str]) -> None:
    """Put NEUTRAL_GIT after whatever config the caller's environment already gives git."""
    start = int(environ.get("GIT_CONFIG_COUNT") or 0)
    for number, (key, value) in enumerate(NEUTRAL_GIT, start):
        environ[f"GIT_CONFIG_KEY_{number}"] = key
        environ[f"GIT_CONFIG_VALUE_{number}"] = value
    environ["GIT_CONFIG_COUNT"] = str(start + len(NEUTRAL_GIT))


def make_scratch() -> str | None:
    """A private folder for the call (TMPDIR, else /tmp, else the working folder), or None
    where nothing is writable. Plain os calls: tempfile's imports cost more than the wall."""
    name = f"scout-wall-{os.getpid()}-{os.urandom(6).hex()}"
    for base in (os.environ.get("TMPDIR"), "/tmp", os.getcwd()):
        if not base:
            continue
        try:
            path = os.path.join(base, name)
            os.mkdir(path, 0o700)
            return path
        except OSError:
            continue
    return None


def remove_tree(path: str) -> None:
    """Remove the scratch folder and what the command left in it, as far as it can."""
    steps = []
    for folder, folders, files in os.walk(path, topdown=False):
        steps += [(os.unlink, os.path.join(folder, name)) for name in files]
        for name in folders:
            target = os.path.join(folder, name)
            steps.append((os.unlink if os.path.islink(target) else os.rmdir, target))
    steps.append((os.rmdir, path))
    for remove, target in steps:
        try:
            remove(target)
        except OSError:
            continue


def own_children() -> list[int]:
    """The processes whose parent is this one (orphans come here: it is their subreaper)."""
    me, found = str(os.getpid()), []
    for name in os.listdir("/proc"):
        if name.isdigit():
            try:
                with open(f"/proc/{name}/stat") as f:
                    stat = f.read()
            except OSError:
                continue
            if stat[stat.rindex(")") + 2 :].split(" ", 2)[1] == me:
                found.append(int(name))
    return found


def end_leftovers() -> None:
    """Kill what the command left running, round by round: each killed parent hands its
    children to this subreaper, until none is left."""
    while True:
        children = own_children()
        if not children:
            return
        for pid in children:
            try:
                os.kill(pid, SIGKILL)
            except OSError:
                continue
        for _ in children:
            try:
                os.waitpid(-1, 0)
            except ChildProcessError:
                break


def isolate_processes() -> str:
    """A PID namespace for the command where the caller may make one (root), else make this
    helper the subreaper of what the command leaves; how it is described."""
    if effective_caps() and _libc.unshare(CLONE_NEWPID) == 0:
        return "pid-namespace"
    if _libc.prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) != 0:
        raise Unwalled("child subreaper: " + os.strerror(ctypes.get_errno()))
    return "subreaper"


# spec key -> the proxy module a call with `KEY=1` gets (each a read-only door to one daemon)
PROXIES = {"docker": "host_docker_proxy", "dbus": "host_dbus_proxy"}


def proxy_module(name: str) -> ModuleType:
    """A proxy's module, imported only by a call that uses it (the others skip its cost)."""
    if __package__:
        return __import__(f"{__package__}.{name}", fromlist=[name])
    return __import__(name)


def start_proxies(
    spec: dict[str, str], ports: list[int], parts: list[str], abi: int
) -> list[tuple[ModuleType, object]]:
    """Daemon sockets stay closed; a call whose spec asks for a proxy (`docker=1`, `dbus=1`)
    reaches the daemon through a read-only one (host_docker_proxy.py, host_dbus_proxy.py) on
    a loopback port added to the call's ports. Where no TCP filter can hold that port
    (Landlock ABI < 4 and not root) there is no proxy: the call stays walled and the client
    meets the closed socket. Returns (module, proxy) pairs."""
    started: list[tuple[ModuleType, object]] = []
    for key, name in PROXIES.items():
        if spec.get(key) != "1":
            continue
        if abi < 4 and not effective_caps():
            parts.append(f"no-{key}-proxy")
            continue
        module = proxy_module(name)
        try:
            proxy = module.start(*module.upstream_socket(os.environ))
        except OSError:  # no loopback port here: the client meets the closed socket
            parts.append(f"no-{key}-proxy")
            continue
        ports.append(proxy.port)
        parts.append(f"{key}-read-proxy")
        started.append((module, proxy))
    return started


def job_reader() -> ModuleType:
    """host_job_reader: the job status read that a resident walled call runs (`read-jobs`)."""
    if __package__:
        from tools.wall import host_job_reader

        return host_job_reader
    return __import__("host_job_reader")


def run(spec_text: str, argv: list[str]) -> int:
    spec = dict(part.partition("=")[::2] for part in spec_text.split())
    ports = [int(port) for port in spec.get("ports", "").split(",") if port]
    addresses = [address for address in spec.get("addrs", "").split(",") if address]
    abi = min(landlock_abi(), int(spec.get("abi") or 99))  # a test's older kernel
    if abi < 1:
        raise Unwalled(NO_LANDLOCK)
    cgroup, parts = None, []
    proxies = start_proxies(spec, ports, parts, abi)
    if ports and effective_caps():
        try:
            cgroup = host_netfilter.filtered_cgroup(addresses, ports)
            parts.append("address-filter")
        except OSError as exc:  # no address filter: Landlock's ports alone, where it has them
            if abi < 4:
                raise Unwalled(f"no TCP filter here ({exc.strerror})") from None
    elif ports and abi < 4:
        raise Unwalled("no TCP filter here (Landlock ABI < 4 and not root)")
    scratch = make_scratch() if spec.get("scratch") == "1" or proxies else None
    parts.append(isolate_processes())
    child = os.fork()
    if child == 0:
        try:
            _libc.prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0)
            if cgroup:
                host_netfilter.join(cgroup)
            for module, proxy in proxies:
                if scratch:
                    module.point_client(proxy, os.environ, scratch)
            os.environ[WALL_ENV] = build_wall(abi, scratch, ports, parts)
            if scratch:
                os.environ["TMPDIR"] = scratch
            neutralise_git(os.environ)
            os.execvp(argv[0], argv)
        except Unwalled as exc:
            print(f"{UNWALLED_MARK} {exc}", flush=True)
            os._exit(UNWALLED_STATUS)
        except OSError as exc:
            print(f"{argv[0]}: {exc.strerror}", file=sys.stderr, flush=True)
            os._exit(127)
    import _signal  # the C module: `signal` would import enum, slower than the whole wall

    # HUP, INT, TERM: the command ends (a namespace's init ignores what it has no handler
    # for, so it gets the one signal it cannot); so it does at its time limit.
    for number in (1, 2, 15):
        _signal.signal(number, lambda got, _frame: os.kill(child, SIGKILL))
    timed_out = []

    def out_of_time(_number: int, _frame: object) -> None:
        timed_out.append(True)
        os.kill(child, SIGKILL)

    if float(spec.get("limit") or 0) > 0:
        _signal.signal(SIGALRM, out_of_time)
        _signal.setitimer(ITIMER_REAL, float(spec["limit"]))
    _, status = os.waitpid(child, 0)
    _signal.setitimer(ITIMER_REAL, 0)
    for module, proxy in proxies:
        module.stop(proxy)
    if "subreaper" in parts:
        end_leftovers()
    if cgroup:
        host_netfilter.remove(cgroup)
    if scratch:
        remove_tree(scratch)
    if timed_out:
        return TIMED_OUT_STATUS
    if os.WIFSIGNALED(status):
        return 128 + os.WTERMSIG(status)
    return os.WEXITSTATUS(status)


def end(code: int) -> None:
    """End the helper with `code` once its output is flushed, never returning: the interpreter's
    own end would take every module apart first, a few ms at the end of each walled call that
    starts the helper (recon's probe among them) for memory the kernel takes back anyway. The
    helper leaves nothing for that end to do: the command, the proxies, the address filter's
    cgroup and the scratch folder are all ended or removed before `run` returns."""
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):  # the reader is gone: nothing more to say
            continue
    os._exit(code)


def main(args: list[str]) -> int:
    if args == ["serve"]:  # the fork-server (host_server.py): each call is main's `run`
        if __package__:
            from tools.wall import host_server
        else:
            host_server = __import__("host_server")
        return host_server.serve(lambda spec, argv: main(["run", spec, "--", *argv]))
    if args[:1] == ["read-jobs"]:  # inside the wall already: a resident walled call runs it
        return job_reader().serve(args[1:])
    if len(args) < 4 or args[0] != "run" or args[2] != "--":
        print("usage: helper run SPEC -- PROGRAM [ARGS...] | helper serve", file=sys.stderr)
        return 2
    try:
        return run(args[1], args[3:])
    except Unwalled as exc:
        print(f"{UNWALLED_MARK} {exc}", flush=True)
        return UNWALLED_STATUS
    except OSError as exc:
        print(f"{args[3]}: {exc.strerror}", file=sys.stderr)
        return 127
