#!/usr/bin/env bash
# The lowest versions pyproject.toml allows, tested: a second venv (.venv-lowest) with every
# runtime dependency pinned to its floor (scripts/lowest_versions.py), then the tests that touch
# what Scout relies on in them (scripts/dependency_tests.txt). scripts/test.sh runs the whole suite
# on the locked versions and scripts/test_newest.sh the newest, so both ends of each range are
# tested. About three minutes.
set -euo pipefail
cd "$(dirname "$0")/.."

venv=.venv-lowest
constraints="$venv/constraints.txt"
[ -x "$venv/bin/python" ] || python3 -m venv --upgrade-deps "$venv"
"$venv/bin/python" scripts/lowest_versions.py >"$constraints"
# not the mcp extra: the SDK needs more than these floors (pydantic, httpx, anyio), so its tests
# skip here and run on the lock and on the newest versions
"$venv/bin/pip" install -q --disable-pip-version-check -c "$constraints" -e '.[test]'
"$venv/bin/pip" check >/dev/null

tested=()
for name in $("$venv/bin/python" scripts/lowest_versions.py --names); do
  low=$("$venv/bin/python" -c "import importlib.metadata as m; print(m.version('$name'))")
  high=$(.venv/bin/python -c "import importlib.metadata as m; print(m.version('$name'))" 2>/dev/null || echo '?')
  tested+=("$name $low..$high")
done
echo "dependency range under test (lowest..locked): ${tested[*]}"

mapfile -t tests < <(grep -v '^#' scripts/dependency_tests.txt)
"$venv/bin/python" -m pytest -q -p no:cacheprovider "${tests[@]}"
