"""Identity and OS tools: uname, hostname, lscpu, nproc, cat, df, id, ps, ss, python3, pip, nvcc."""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path
from typing import Any

from .units import human_df
from .views import system_file

_LSCPU_CORE = """\
Model name:                              {model}
Model:                                   1
Thread(s) per core:                      1
Core(s) per socket:                      {half}
Socket(s):                               1
Stepping:                                r0p1
"""


def run_uname(args: list[str], state: dict[str, Any]) -> int:
    fields = {
        "s": "Linux",
        "n": state["hostname"],
        "r": state["kernel"],
        "v": state["kernel_build"],
        "m": state["arch"],
        "p": state["arch"],
        "i": state["arch"],
        "o": "GNU/Linux",
    }
    long_names = {
        "--all": "a",
        "--kernel-name": "s",
        "--nodename": "n",
        "--kernel-release": "r",
        "--kernel-version": "v",
        "--machine": "m",
        "--processor": "p",
        "--hardware-platform": "i",
        "--operating-system": "o",
    }
    wanted: set[str] = set()
    for arg in args:
        letters = long_names.get(arg) or (
            arg[1:] if arg.startswith("-") and arg[1:2] != "-" else ""
        )
        if not letters or any(letter not in "asnrvmpio" for letter in letters):
            sys.stderr.write(
                f"uname: invalid option -- '{arg.lstrip('-')}'\n"
                "Try 'uname --help' for more information.\n"
            )
            return 1
        wanted.update(letters)
    if "a" in wanted:
        wanted = set("snrvmpio")
    order = "snrvmpio"
    print(" ".join(fields[k] for k in order if k in (wanted or {"s"})))
    return 0


def run_hostname(args: list[str], state: dict[str, Any]) -> int:
    if args and args[0] in ("-I", "--all-ip-addresses"):
        from .links import visible_addresses

        ips = [
            a.split("/")[0]
            for nic in state["nics"].values()
            if nic["kind"] != "loopback"
            for a in visible_addresses(nic)
            if ":" not in a
        ]
        print(" ".join(ips) + " ")
        return 0
    if args and not args[0].startswith("-"):
        sys.stderr.write("hostname: you must be root to change the host name\n")
        return 1
    print(state["hostname"])
    return 0


def _lscpu_x86(state: dict[str, Any]) -> str:
    """util-linux 2.37's nested layout on Ubuntu 22.04 (8×H100 and 8×V100 hosts in a public
    GitHub file, index id 39833510183); 2 threads per core, the sockets from the scenario."""
    cores = state["cpus"] // 2 // state["cpu_sockets"]
    rows = [
        ("", "Architecture:", state["arch"]),
        ("  ", "CPU op-mode(s):", "32-bit, 64-bit"),
        ("  ", "Address sizes:", "52 bits physical, 57 bits virtual"),
        ("  ", "Byte Order:", "Little Endian"),
        ("", "CPU(s):", str(state["cpus"])),
        ("  ", "On-line CPU(s) list:", f"0-{state['cpus'] - 1}"),
        ("", "Vendor ID:", "GenuineIntel"),
        ("  ", "Model name:", state["cpu_model"]),
        ("    ", "CPU family:", "6"),
        ("    ", "Model:", "143"),
        ("    ", "Thread(s) per core:", "2"),
        ("    ", "Core(s) per socket:", str(cores)),
        ("    ", "Socket(s):", str(state["cpu_sockets"])),
    ]
    return "\n".join(f"{indent + key:<26}{value}" for indent, key, value in rows)


def run_lscpu(args: list[str], state: dict[str, Any]) -> int:
    if state["cpu_model"]:
        print(_lscpu_x86(state))
        return 0
    half = state["cpus"] // 2
    head = [
        ("Architecture:", state["arch"]),
        ("CPU op-mode(s):", "64-bit"),
        ("Byte Order:", "Little Endian"),
        ("CPU(s):", str(state["cpus"])),
        ("On-line CPU(s) list:", f"0-{state['cpus'] - 1}"),
        ("Vendor ID:", "ARM"),
    ]
    out = [f"{k:<41}{v}" for k, v in head]
    big = _LSCPU_CORE.format(model="Cortex-X925", half=half)
    out.append(big.rstrip("\n"))
    out.append(f"{'Frequency boost:':<41}disabled")
    out.append(f"{'CPU(s) scaling MHz:':<41}100%")
    out.append(f"{'CPU max MHz:':<41}3900.0000")
    out.append(f"{'CPU min MHz:':<41}1378.0000")
    out.append(f"{'BogoMIPS:':<41}2000.00")
    out.append(
        f"{'Flags:':<41}fp asimd evtstrm aes pmull sha1 sha2 crc32 atomics fphp asimdhp "
        "cpuid asimdrdm jscvt fcma lrcpc dcpop sha3 sm3 sm4 asimddp sha512 sve asimdfhm dit "
        "uscat ilrcpc flagm sb paca pacg dcpodp sve2 sveaes svepmull svebitperm svesha3 "
        "svesm4 flagm2 frint svei8mm svebf16 i8mm bf16 dgh bti ecv afp wfxt"
    )
    out.append(_LSCPU_CORE.format(model="Cortex-A725", half=half).rstrip("\n"))
    out.append(f"{'CPU(s) scaling MHz:':<41}100%")
    out.append(f"{'CPU max MHz:':<41}2808.0000")
    out.append(f"{'CPU min MHz:':<41}338.0000")
    out.append(f"{'BogoMIPS:':<41}2000.00")
    out.append("Caches (sum of all):")
    out.append(f"{'  L1d:':<41}1.3 MiB (20 instances)")
    out.append(f"{'  L1i:':<41}1.3 MiB (20 instances)")
    out.append(f"{'  L2:':<41}25 MiB (20 instances)")
    out.append(f"{'  L3:':<41}24 MiB (2 instances)")
    out.append("NUMA:")
    out.append(f"{'  NUMA node(s):':<41}1")
    out.append(f"{'  NUMA node0 CPU(s):':<41}0-{state['cpus'] - 1}")
    print("\n".join(out))
    return 0


def run_nproc(args: list[str], state: dict[str, Any]) -> int:
    print(state["cpus"])
    return 0


def run_cat(args: list[str], state: dict[str, Any], host_dir: Path) -> int:
    """Known system files come from the state; other paths only inside the host folder."""
    code = 0
    for arg in args or ["-"]:
        if arg == "-":
            sys.stdout.write(sys.stdin.read())
            continue
        text = system_file(arg, state)
        if text is None:
            text = _host_file(arg, host_dir)
        if text is None:
            sys.stderr.write(f"cat: {arg}: No such file or directory\n")
            code = 1
            continue
        sys.stdout.write(text)
    return code


def _host_file(arg: str, host_dir: Path) -> str | None:
    home = host_dir / "home"
    candidate = (home / arg).resolve() if not arg.startswith("/") else Path(arg).resolve()
    if not candidate.is_relative_to(host_dir.resolve()) or not candidate.is_file():
        return None
    if candidate.name in ("state.json", "state.lock") or candidate.parent == host_dir / "bin":
        return None
    return candidate.read_text(errors="replace")


def run_df(args: list[str], state: dict[str, Any]) -> int:
    human = any(a in ("-h", "--human-readable") or (a.startswith("-") and "h" in a) for a in args)
    paths = [a for a in args if not a.startswith("-")]
    disks = state["disks"]
    if paths:
        chosen = []
        for path in paths:
            best = max(
                (d for d in disks if path.startswith(d["mount"])),
                key=lambda d: len(d["mount"]),
                default=None,
            )
            if best is None:
                sys.stderr.write(f"df: {path}: No such file or directory\n")
                return 1
            chosen.append(best)
        disks = chosen
    if human:
        print(f"{'Filesystem':<15} {'Size':>5} {'Used':>5} {'Avail':>5} Use% Mounted on")
    else:
        print(
            f"{'Filesystem':<15} {'1K-blocks':>10} {'Used':>10} {'Available':>10} Use% Mounted on"
        )
    for d in disks:
        reserved = d["size_kb"] // 20 if d["fstype"] == "ext4" else 0
        avail = max(d["size_kb"] - d["used_kb"] - reserved, 0)
        pct = -(-d["used_kb"] * 100 // max(d["used_kb"] + avail, 1))
        fs = d["filesystem"]
        if human:
            cols = (human_df(d["size_kb"]), human_df(d["used_kb"]), human_df(avail))
            print(f"{fs:<15} {cols[0]:>5} {cols[1]:>5} {cols[2]:>5} {pct:>3}% {d['mount']}")
        else:
            print(
                f"{fs:<15} {d['size_kb']:>10} {d['used_kb']:>10} {avail:>10} {pct:>3}% {d['mount']}"
            )
    return 0


def run_id(args: list[str], state: dict[str, Any]) -> int:
    user, groups = state["user"], state["groups"]
    gids = {"adm": 4, "sudo": 27, "docker": 989}
    if "-nG" in args or ("-G" in args and "-n" in args) or "-Gn" in args:
        print(" ".join(groups))
    elif "-un" in args or "-nu" in args:
        print(user)
    elif "-u" in args:
        print(1000)
    elif "-G" in args:
        print(" ".join(str(gids.get(g, 1000)) for g in groups))
    else:
        listed = ",".join(f"{gids.get(g, 1000)}({g})" for g in groups)
        print(f"uid=1000({user}) gid=1000({user}) groups={listed}")
    return 0


def run_whoami(args: list[str], state: dict[str, Any]) -> int:
    print(state["user"])
    return 0


def run_ps(args: list[str], state: dict[str, Any]) -> int:
    rows = [
        ("root", 1, "/sbin/init splash"),
        ("root", 1432, "sshd: /usr/sbin/sshd -D"),
        ("root", 1876, "/usr/bin/dockerd -H fd:// --containerd=/run/containerd/containerd.sock"),
        ("root", 1910, "/usr/bin/containerd"),
        ("root", 2210, "/usr/bin/dgx-dashboard --port 11000"),
    ]
    for c in state["docker"]["containers"].values():
        if c["state"] == "running":
            rows.append(
                (
                    "root",
                    40000 + len(rows),
                    f"/usr/bin/containerd-shim-runc-v2 -namespace moby -id {c['id']}",
                )
            )
            if c.get("gpu_process"):
                rows.append(("root", c["gpu_process"]["pid"], c["command"]))
    rows.append((state["user"], 61000, "-bash"))
    if any("e" in a or "a" in a for a in args):
        print("UID          PID    PPID  C STIME TTY          TIME CMD")
        for user, pid, cmd in rows:
            print(f"{user:<8} {pid:>7} {1:>7}  0 Nov09 ?        00:00:01 {cmd}")
    else:
        print("    PID TTY          TIME CMD")
        print("  61000 pts/0    00:00:00 bash")
    return 0


def run_ss(args: list[str], state: dict[str, Any]) -> int:
    listeners = [(x["address"], x["port"], x["process"]) for x in state["listeners"]]
    for c in state["docker"]["containers"].values():
        if c["state"] == "running":
            listeners += [("0.0.0.0", port, "") for port in c["listen"]]
    print("State  Recv-Q Send-Q Local Address:Port  Peer Address:PortProcess")
    for address, port, _process in listeners:
        local = f"{address}:{port}"
        print(f"LISTEN 0      4096   {local:>18}      0.0.0.0:*          ")
    return 0


def run_python3(args: list[str], state: dict[str, Any]) -> int:
    if args[:1] in (["--version"], ["-V"]):
        print(f"Python {state['python_version']}")
        return 0
    if args[:2] == ["-m", "pip"]:
        return run_pip(args[2:], state)
    code = args[args.index("-c") + 1] if "-c" in args[:-1] else ""
    if all(word in code for word in _PACKAGE_LISTING):
        return _print_installed_packages(state)
    sys.stderr.write(
        "python3: this simulated host only answers 'python3 --version', "
        "'python3 -m pip list' and a script that lists importlib.metadata.distributions() as "
        "JSON; it runs no other Python code.\n"
    )
    return 2


# A script that walks importlib.metadata's distributions and prints them with json.dumps: what
# the recon probe asks of a host's interpreter (tools/recon/installed_packages.py).
_PACKAGE_LISTING = ("importlib.metadata", "distributions(", "json.dumps")


def _print_installed_packages(state: dict[str, Any]) -> int:
    """What such a script prints on a real host: pip list's JSON form, sorted by canonical name
    (Python docs, importlib.metadata: Distribution.metadata Name, version)."""
    packages = state["pip_packages"]
    rows = [{"name": n, "version": v} for n, v in packages.items()]
    rows.sort(key=lambda row: re.sub(r"[-_.]+", "-", row["name"]).lower())
    print(json.dumps(rows))
    return 0


def run_pip(args: list[str], state: dict[str, Any]) -> int:
    packages = state["pip_packages"]
    if args[:1] == ["--version"]:
        print(
            f"pip {packages.get('pip', '24.0')} from /usr/lib/python3/dist-packages/pip "
            f"(python {state['python_version'].rsplit('.', 1)[0]})"
        )
        return 0
    if args[:1] not in (["list"], ["freeze"]):
        sys.stderr.write("pip: this simulated host only answers 'pip list' and 'pip freeze'.\n")
        return 2
    if args[0] == "freeze":
        print("\n".join(f"{n}=={v}" for n, v in sorted(packages.items()) if n != "pip"))
    elif "--format=json" in args or args[-2:] == ["--format", "json"]:
        print(json.dumps([{"name": n, "version": v} for n, v in sorted(packages.items())]))
    else:
        width = max([len("Package"), *map(len, packages)])
        print(f"{'Package':<{width}} Version\n{'-' * width} -------")
        print("\n".join(f"{n:<{width}} {v}" for n, v in sorted(packages.items())))
    return 0


def run_nvcc(args: list[str], state: dict[str, Any]) -> int:
    """Only installed in the host's bin folder when the scenario puts nvcc on PATH."""
    print("nvcc: NVIDIA (R) Cuda compiler driver\nCopyright (c) 2005-2025 NVIDIA Corporation")
    print(
        "Built on Wed_Aug_20_01:58:59_PM_PDT_2025\nCuda compilation tools, release 13.0, V13.0.88"
    )
    print("Build cuda_13.0.r13.0/compiler.36424714_0")
    return 0
