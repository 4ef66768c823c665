#!/usr/bin/env bash
# Set up everything Scout's tests need on a fresh machine, then run lint and the whole suite.
# As root on Debian it also installs the real parts the system tests use (OpenSSH sshd, dockerd,
# busybox for a local image, tmux, AIPerf in .venv-aiperf), a C compiler for the simulator's
# fake-tool client, and the awks a host may have (mawk, gawk, the original awk; BusyBox's) for
# the status program's matrix; without root those tests skip and say why. With no arguments it
# then tests the lowest dependency versions pyproject.toml allows (scripts/test_lowest.sh).
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

[ -x .venv/bin/python ] || python3 -m venv --upgrade-deps .venv
# the newest versions pyproject allows, also in a venv made before they came out
.venv/bin/pip install -q --disable-pip-version-check --upgrade --upgrade-strategy eager -e '.[test]'
# AIPerf, the outside client whose numbers tests/integration/test_aiperf_crosscheck.py holds
# Scout's against, in its own venv (its dependencies are not Scout's); as root like the real parts
if [ "$(id -u)" = 0 ]; then
  [ -x .venv-aiperf/bin/python ] || python3 -m venv --upgrade-deps .venv-aiperf
  .venv-aiperf/bin/pip install -q --disable-pip-version-check 'aiperf==0.13.0'
fi
.venv/bin/ruff check .
.venv/bin/ruff format --check .
.venv/bin/python -m pytest -q -p no:cacheprovider "$@"
# the whole suite ran on the newest versions pip resolves; now the lowest that pyproject allows
[ $# -gt 0 ] || bash scripts/test_lowest.sh
