"""What Scout's dependencies warn when they are imported, held to a reviewed list.

cryptography 51 deprecated DSA, and asyncssh 2.24 names DSA types at import: every face printed ten
lines of warnings before its own output, and tests that read stderr broke, on a machine set up two
days after CI was green. The faces now keep library warnings off the screen; this test is the
canary that makes such a release visible. In the newest-versions stage (scripts/test_newest.sh) a
dependency that starts warning fails here, naming the distribution that warned and the one whose
import set it off, and the stage names the packages that moved since uv.lock.
"""

from __future__ import annotations

import importlib.metadata
import json
import re
import subprocess
import sys

import pytest

# Warnings seen, read and accepted: (the distribution imported, the warning's category, a pattern
# of its message), each with why it is harmless to Scout.
KNOWN: tuple[tuple[str, str, str], ...] = (
    # asyncssh 2.24 annotates its DSA key types at import; Scout never makes or accepts DSA keys
    # (OpenSSH dropped them in 9.8), and the faces log the warning instead of printing it.
    ("asyncssh", "CryptographyDeprecationWarning", r"DSA is deprecated"),
)

_IMPORT_EACH = r"""
import importlib, json, sys, warnings
found = []
for dist, module in json.loads(sys.argv[1]):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        importlib.import_module(module)
    found += [
        {"dist": dist, "module": module, "category": w.category.__name__,
         "raised_by": w.category.__module__.split(".")[0],
         "message": str(w.message), "where": f"{w.filename}:{w.lineno}"}
        for w in caught
    ]
print(json.dumps(found))
"""


def _runtime_modules() -> list[tuple[str, str]]:
    """(distribution, top-level module) for each runtime dependency of the installed Scout."""
    wanted = {
        _canonical(re.split(r"[\s<>=!~;\[(]", requirement, maxsplit=1)[0])
        for requirement in importlib.metadata.requires("scout-agent") or []
        if "extra ==" not in requirement
    }
    return sorted(
        (dist, module)
        for module, dists in importlib.metadata.packages_distributions().items()
        for dist in dists
        if _canonical(dist) in wanted and not module.startswith("_")
    )


def _canonical(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def test_every_runtime_dependency_is_found_to_import() -> None:
    imported = {_canonical(dist) for dist, _ in _runtime_modules()}
    assert {"anthropic", "asyncssh", "pydantic", "rich", "structlog"} <= imported


@pytest.mark.slow
def test_no_dependency_warns_on_import_beyond_the_reviewed_list() -> None:
    modules = _runtime_modules()
    run = subprocess.run(
        [sys.executable, "-c", _IMPORT_EACH, json.dumps(modules)],
        capture_output=True,
        text=True,
        check=True,
        timeout=120,
    )
    warned = json.loads(run.stdout.strip().splitlines()[-1])
    unreviewed = [
        f"importing {w['module']} ({w['dist']} "
        f"{importlib.metadata.version(w['dist'])}) warned {w['category']} (from {w['raised_by']}): "
        f"{w['message'][:160]} at {w['where']}"
        for w in warned
        if not any(
            _canonical(w["dist"]) == dist
            and w["category"] == category
            and re.search(pattern, w["message"])
            for dist, category, pattern in KNOWN
        )
    ]
    assert unreviewed == [], "\n".join(unreviewed)
