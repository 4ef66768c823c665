#!/usr/bin/env bash
# The lowest versions pyproject.toml allows, tested: a second venv (.venv-lowest) with every
# runtime dependency pinned to its floor (scripts/lowest_versions.py), then the tests that touch
# what Scout relies on in them. scripts/test.sh runs the whole suite on the newest versions pip
# resolves, so together they test both ends of each range. About two minutes.
set -euo pipefail
cd "$(dirname "$0")/.."

venv=.venv-lowest
constraints="$venv/constraints.txt"
[ -x "$venv/bin/python" ] || python3 -m venv --upgrade-deps "$venv"
"$venv/bin/python" scripts/lowest_versions.py >"$constraints"
"$venv/bin/pip" install -q --disable-pip-version-check -c "$constraints" -e '.[test]'
"$venv/bin/pip" check >/dev/null

tested=()
for name in $("$venv/bin/python" scripts/lowest_versions.py --names); do
  low=$("$venv/bin/python" -c "import importlib.metadata as m; print(m.version('$name'))")
  high=$(.venv/bin/python -c "import importlib.metadata as m; print(m.version('$name'))" 2>/dev/null || echo '?')
  tested+=("$name $low..$high")
done
echo "dependency range under test (lowest..newest): ${tested[*]}"

# anthropic + httpx2: streams, drops, retries, errors, counted usage; asyncssh: the SSH pool,
# timeouts, the simulator's server; httpx: web fetch, webhooks, endpoint checks; pydantic,
# pydantic-settings, pyyaml: settings, inventory and their error lines (unit); tenacity: retries;
# rich, prompt_toolkit: what the faces print; trafilatura, selectolax, lxml_html_clean: pages.
"$venv/bin/python" -m pytest -q -p no:cacheprovider tests/unit \
  tests/integration/test_model_client_failures.py tests/integration/test_replay_server.py \
  tests/integration/test_session_loop.py tests/integration/test_strict_api.py \
  tests/integration/test_compaction.py tests/integration/test_headless_run.py \
  tests/integration/test_replay_and_resume.py tests/integration/test_usage_view.py \
  tests/integration/test_ssh_pool.py tests/integration/test_ssh_exec.py \
  tests/integration/test_web_fetch.py tests/integration/test_webhook_approver.py \
  tests/integration/test_deploy_endpoint.py tests/integration/test_chat_face.py \
  tests/integration/test_doctor_and_init.py
