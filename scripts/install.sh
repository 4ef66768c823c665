#!/usr/bin/env bash
# Install Scout into .venv from the lock: uv.lock holds the exact version and hashes of every
# package, the ones CI tested, for every platform and Python Scout supports, so a machine set up a
# month from now gets what passed today. uv itself comes pinned and hashed (scripts/uv-requirements.txt).
#
#   bash scripts/install.sh            # Scout
#   bash scripts/install.sh test       # Scout and its test extra (what scripts/test.sh runs)
#
# PYTHON picks the interpreter for a new .venv (default python3; Scout needs 3.11 or newer).
# A pipx or wheel install resolves pyproject.toml's ranges instead: see README, "Installing".
set -euo pipefail
cd "$(dirname "$0")/.."

[ -x .venv/bin/python ] || "${PYTHON:-python3}" -m venv --upgrade-deps .venv
.venv/bin/python -m pip install -q --disable-pip-version-check --require-hashes \
  -r scripts/uv-requirements.txt
extras=()
for extra in "$@"; do extras+=(--extra "$extra"); done
# --locked: refuse a uv.lock that no longer matches pyproject.toml instead of re-resolving;
# --inexact: keep pip and uv in the venv (the lock does not list them).
.venv/bin/uv sync --quiet --locked --inexact --python .venv/bin/python "${extras[@]}"
