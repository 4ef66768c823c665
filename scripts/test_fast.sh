#!/usr/bin/env bash
# The fast tier: lint, then every test not marked slow, system or install (pyproject.toml's
# markers), in a few minutes on two cores. scripts/test.sh still runs the whole suite; run it
# before a merge. Runs in the .venv scripts/test.sh uses (installed from the lock here the first
# time, as test.sh installs it); pytest arguments pass through: `bash scripts/test_fast.sh -x`.
set -euo pipefail
cd "$(dirname "$0")/.."

[ -x .venv/bin/pytest ] || bash scripts/install.sh test mcp
.venv/bin/ruff check .
.venv/bin/ruff format --check .
.venv/bin/python -m pytest -q -p no:cacheprovider -m "not slow and not system and not install" "$@"
