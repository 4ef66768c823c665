#!/usr/bin/env bash
# Set up everything Scout's tests need on a fresh machine, then test Scout in three stages:
#   1. the lock: .venv installed from uv.lock (scripts/install.sh, what the README installs), lint
#      and the whole suite;
#   2. the lowest versions pyproject.toml's ranges allow (scripts/test_lowest.sh);
#   3. the newest versions pip resolves today (scripts/test_newest.sh): a release that breaks Scout
#      is named there and fails the run, so the lock is refreshed on purpose.
# Each stage stops the run when it fails. With arguments, only stage 1, passing them to pytest.
# As root on Debian it also installs the real parts the system tests use (OpenSSH sshd, dockerd,
# busybox for a local image, tmux, AIPerf in .venv-aiperf), a C compiler for the simulator's
# fake-tool client, and the awks a host may have (mawk, gawk, the original awk; BusyBox's) for
# the status program's matrix; without root those tests skip and say why.
set -euo pipefail
cd "$(dirname "$0")/.."

if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
  missing=()
  for pkg in openssh-server docker.io busybox-static tmux iproute2 procps gcc libc6-dev \
    mawk gawk original-awk; do
    dpkg -s "$pkg" >/dev/null 2>&1 || missing+=("$pkg")
  done
  if [ ${#missing[@]} -gt 0 ]; then
    echo "installing: ${missing[*]}"
    apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
  fi
fi

echo "stage 1 of 3: the locked versions (uv.lock)"
bash scripts/install.sh test mcp
# AIPerf, the outside client whose numbers tests/integration/test_aiperf_crosscheck.py holds
# Scout's against, in its own venv (its dependencies are not Scout's); as root like the real parts
if [ "$(id -u)" = 0 ]; then
  [ -x .venv-aiperf/bin/python ] || python3 -m venv --upgrade-deps .venv-aiperf
  .venv/bin/uv pip install --quiet --python .venv-aiperf/bin/python --require-hashes \
    -r scripts/aiperf-requirements.txt
fi
.venv/bin/ruff check .
.venv/bin/ruff format --check .
.venv/bin/python -m pytest -q -p no:cacheprovider "$@"
[ $# -eq 0 ] || exit 0
echo "stage 2 of 3: the lowest versions pyproject.toml allows"
bash scripts/test_lowest.sh
echo "stage 3 of 3: the newest versions pip resolves today"
bash scripts/test_newest.sh
