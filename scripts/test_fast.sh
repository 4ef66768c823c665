#!/usr/bin/env bash
# The fast tier: lint, then every test not marked slow, system or install (pyproject.toml's
# markers), in a few minutes on two cores. scripts/test.sh still runs the whole suite; run it
# before a merge. Uses the .venv scripts/test.sh sets up; pytest arguments pass through, e.g.
# `bash scripts/test_fast.sh tests/unit -x`.
set -euo pipefail
cd "$(dirname "$0")/.."

[ -x .venv/bin/python ] || { echo "no .venv: run bash scripts/test.sh once" >&2; exit 1; }
.venv/bin/ruff check .
.venv/bin/ruff format --check .
.venv/bin/python -m pytest -q -p no:cacheprovider -m "not slow and not system and not install" "$@"
