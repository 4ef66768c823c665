"""What Python packages a host has, read from the interpreter's own package metadata.

`pip3 list` would answer too, but pip checks the package index for a newer pip first: a read-only
probe then makes a network request, writes ~/.cache/pip/selfcheck on the host, and spends most of
its time there. `importlib.metadata` (Python ≥ 3.8) reads the same `*.dist-info` files with no
network and no writes (`-B`: no bytecode files either), and the script prints what
`pip list --format json` prints: the same distributions as pip finds them on sys.path (the
first of a name wins; pip's own skip list: python, wsgiref, argparse), sorted by canonical name,
`name` as the metadata spells it, `version` normalised as pip does when `packaging` (or pip's
own copy) is there, and `editable_project_location` for an editable install (direct_url.json,
PEP 610/660).

The shell judge knows this script by its exact text (agent/safety/shell/rules_packages.py): it
runs no other code and reads only, so the probe stays read-only.
"""

from __future__ import annotations

import shlex

INSTALLED_PACKAGES_SCRIPT = """\
import importlib.metadata as md, json, re, sys, urllib.parse as up
try:
    from packaging.version import Version
except Exception:
    try:
        from pip._vendor.packaging.version import Version
    except Exception:
        Version = None
def version(text):
    try:
        return str(Version(text)) if Version else text
    except Exception:
        return text
found = {}
for dist in md.distributions(path=sys.path[1:]):
    name = dist.metadata.get("Name")
    key = re.sub(r"[-_.]+", "-", name).lower() if name else None
    if key is None or key in found or key in ("python", "wsgiref", "argparse"):
        continue
    item = {"name": name, "version": version(dist.version)}
    try:
        url = json.loads(dist.read_text("direct_url.json") or "{}")
    except ValueError:
        url = {}
    if url.get("dir_info", {}).get("editable") and url.get("url", "").startswith("file:"):
        item["editable_project_location"] = up.unquote(up.urlsplit(url["url"]).path)
    found[key] = item
print(json.dumps([found[key] for key in sorted(found)]))
"""

# `sys.path[1:]`: without the folder `-c` puts first (the working directory), as pip's own
# entry script sees it.
INSTALLED_PACKAGES_COMMAND = f"python3 -B -c {shlex.quote(INSTALLED_PACKAGES_SCRIPT)}"
