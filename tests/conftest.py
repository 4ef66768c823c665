"""Keep every test away from the user's own Scout home and API credentials."""

import pytest


@pytest.fixture(autouse=True)
def _private_scout_home(tmp_path_factory, monkeypatch):
    monkeypatch.setenv("SCOUT_HOME", str(tmp_path_factory.mktemp("scout-home")))
    for name in (
        "ANTHROPIC_API_KEY",
        "ANTHROPIC_BASE_URL",
        "ANTHROPIC_AUTH_TOKEN",
        "SCOUT_SETTINGS",
    ):
        monkeypatch.delenv(name, raising=False)
