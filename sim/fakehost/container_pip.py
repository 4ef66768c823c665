"""`pip show` and `pip install` inside a container: what an image can run, and adding Ray to it.

- `pip show A B C` prints one `Name:`/`Version:`/… block per installed package, separated by
  `---`, and logs `WARNING: Package(s) not found: …` (sorted, comma-joined) for the rest; it
  exits 1 only when none was found (pip/_internal/commands/show.py).
- `pip install 'ray[default]>=2.9'` is what NVIDIA's two-Spark playbook runs in the NGC 26.05
  image before `ray start`, which ships without Ray (docs/sources.md §2.3). With a
  network it installs (`Successfully installed …`); where the container has none (`--network
  none`, or a host without internet such as the seed's worker) pip retries and gives up as it
  does when the index does not resolve (tests/fixtures/jobs/pip_install_no_network_…buildkit.txt).
  A package already there answers `Requirement already satisfied` (pip_install_ray_default_…).
"""

from __future__ import annotations

import re
import sys

from .container import Container
from .state import locked_state

SITE = "/usr/local/lib/python3.12/dist-packages"
# What the sim's package index serves (the version is the sim's choice, not a claim about PyPI).
INDEX = {"ray": "2.49.1"}
_SUMMARY = {
    "ray": "Ray provides a simple, universal API for building distributed applications.",
    "vllm": "A high-throughput and memory-efficient inference and serving engine for LLMs",
    "sglang": "SGLang is a fast serving framework for large language models and vision language "
    "models.",
}
_RETRY = (
    "WARNING: Retrying (Retry(total={n}, connect=None, read=None, redirect=None, status=None)) "
    "after connection broken by 'NewConnectionError('<pip._vendor.urllib3.connection."
    "HTTPSConnection object at 0x7f3a1c2e4d10>: Failed to establish a new connection: [Errno -3] "
    "Temporary failure in name resolution')': /simple/{name}/\n"
)


def run_pip(ctr: Container, args: list[str]) -> int:
    words = [a for a in args if not a.startswith("-")]
    if words[:1] == ["show"]:
        return _show(ctr, words[1:])
    if words[:1] == ["install"]:
        return _install(ctr, words[1:])
    sys.stderr.write(f'ERROR: unknown command "{words[0] if words else ""}"\n')
    return 1


def _show(ctr: Container, names: list[str]) -> int:
    have = ctr.packages()
    found = [n for n in names if n.lower() in have]
    blocks = [
        f"Name: {n}\nVersion: {have[n.lower()]}\nSummary: {_SUMMARY.get(n.lower(), '')}\n"
        f"Home-page: \nAuthor: \nAuthor-email: \nLicense: Apache 2.0\nLocation: {SITE}\n"
        "Requires: \nRequired-by: \n"
        for n in found
    ]
    sys.stdout.write("---\n".join(blocks))
    sys.stdout.flush()
    missing = sorted(n for n in names if n.lower() not in have)
    if missing:
        sys.stderr.write(f"WARNING: Package(s) not found: {', '.join(missing)}\n")
    return 0 if found else 1


def _install(ctr: Container, specs: list[str]) -> int:
    have = ctr.packages()
    wanted = [(spec, re.split(r"[\[<>=!~ ]", spec, maxsplit=1)[0].lower()) for spec in specs]
    for spec, name in wanted:
        if name in have:
            print(f"Requirement already satisfied: {spec} in {SITE} ({have[name]})")
    new = [(spec, name) for spec, name in wanted if name not in have]
    if not new:
        return 0
    spec, name = new[0]
    if not ctr.online() or name not in INDEX:
        if not ctr.online():
            for n in range(4, -1, -1):
                sys.stderr.write(_RETRY.format(n=n, name=name))
        sys.stderr.write(
            f"ERROR: Could not find a version that satisfies the requirement {spec} "
            f"(from versions: none)\nERROR: No matching distribution found for {spec}\n"
        )
        return 1
    installed = {n: INDEX[n] for _s, n in new if n in INDEX}
    for s, n in new:
        print(f"Collecting {s}\n  Downloading {n}-{INDEX[n]}-cp312-cp312-manylinux2014_aarch64.whl")
    print("Successfully installed " + " ".join(f"{n}-{v}" for n, v in installed.items()))
    with locked_state(ctr.host_dir) as state:
        record = state["docker"]["containers"].get(ctr.name)
        if record is not None:
            record.setdefault("installed", {}).update(installed)
    return 0
