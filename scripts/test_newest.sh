#!/usr/bin/env bash
# The newest versions pip resolves today, tested: a third venv (.venv-newest) upgraded to the newest
# release of every dependency pyproject.toml's ranges admit, then the tests that touch them
# (scripts/dependency_tests.txt). The README installs the lock, so a release that breaks Scout
# reaches no user; this stage is where it is seen first. It names the packages that moved since
# the lock and fails, so the lock is refreshed on purpose once Scout works with them.
set -euo pipefail
cd "$(dirname "$0")/.."

venv=.venv-newest
[ -x "$venv/bin/python" ] || python3 -m venv --upgrade-deps "$venv"
"$venv/bin/pip" install -q --disable-pip-version-check --upgrade --upgrade-strategy eager -e '.[test,mcp]'
"$venv/bin/pip" check >/dev/null

drift=$("$venv/bin/python" scripts/lock_drift.py)
echo "newest versions, moved since uv.lock: ${drift:-none}" | paste -sd ' ' | sed 's/ -> /->/g'

mapfile -t tests < <(grep -v '^#' scripts/dependency_tests.txt)
if ! "$venv/bin/python" -m pytest -q -p no:cacheprovider "${tests[@]}"; then
  echo "newest stage FAILED with the newest versions pip resolves today." >&2
  if [ -n "$drift" ]; then
    echo "packages that moved since uv.lock (one of these broke it):" >&2
    sed 's/^/  /' <<<"$drift" >&2
  else
    echo "no locked package moved: the failure is not a dependency's new release" >&2
  fi
  echo "users installing from uv.lock are unaffected; fix Scout, then refresh the lock on" \
    "purpose: uv lock --upgrade-package NAME" >&2
  exit 1
fi
