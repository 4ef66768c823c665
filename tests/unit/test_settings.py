"""Settings: defaults < the settings file < SCOUT_* < ANTHROPIC_* (key, URL) < flags, validated."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from agent.runtime.settings import Settings, SettingsError, load_settings


@pytest.fixture
def settings_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    def write(text: str) -> Path:
        path = tmp_path / "settings.yaml"
        path.write_text(text, encoding="utf-8")
        monkeypatch.setenv("SCOUT_SETTINGS", str(path))
        return path

    return write


def test_each_later_source_wins(settings_file, monkeypatch: pytest.MonkeyPatch) -> None:
    settings_file("model: from-file\nmax_turns: 5\nmode: plan\nbase_url: http://file\n")
    monkeypatch.setenv("SCOUT_MAX_TURNS", "7")
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-from-sdk-variable")
    monkeypatch.setenv("ANTHROPIC_BASE_URL", "http://sdk-variable")
    settings = load_settings({"mode": "ci", "model": None})
    assert settings.model == "from-file"
    assert settings.max_turns == 7
    assert settings.mode == "ci"
    assert settings.base_url == "http://sdk-variable"
    assert settings.api_key is not None
    assert settings.api_key.get_secret_value() == "sk-ant-from-sdk-variable"
    monkeypatch.setenv("SCOUT_API_KEY", "sk-ant-scout-variable")
    assert load_settings().api_key.get_secret_value() == "sk-ant-scout-variable"


def test_the_home_settings_file_is_read_when_scout_settings_is_unset() -> None:
    home = Path(os.environ["SCOUT_HOME"])
    home.mkdir(parents=True, exist_ok=True)
    (home / "settings.yaml").write_text("max_cost_usd: 2.5\n", encoding="utf-8")
    assert load_settings().max_cost_usd == 2.5


def test_settings_built_in_code_ignore_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SCOUT_MODEL", "from-env")
    assert Settings().model == "claude-sonnet-4-5"
    assert Settings(model="given").model == "given"


def test_budgets_and_limits_come_from_settings() -> None:
    settings = Settings(max_turns=3, tool_timeout_s=9, per_key_concurrency=2)
    assert settings.budgets().max_turns == 3
    assert settings.budgets().max_cost_usd == Settings().max_cost_usd
    limits = settings.executor_limits()
    assert (limits.default_timeout_s, limits.per_key_concurrency) == (9, 2)


@pytest.mark.parametrize(
    ("source", "field"),
    [
        ("file", "max_cost_usd"),
        ("env", "max_turns"),
        ("flag", "max_tokens_per_turn"),
        ("file", "tool_timeout_s"),
    ],
)
@pytest.mark.parametrize("value", ["-5", "0"])
def test_a_budget_that_is_not_positive_is_refused(
    settings_file, monkeypatch: pytest.MonkeyPatch, source: str, field: str, value: str
) -> None:
    flags = {}
    if source == "file":
        settings_file(f"{field}: {value}\n")
    elif source == "env":
        monkeypatch.setenv(f"SCOUT_{field.upper()}", value)
    else:
        flags[field] = value
    with pytest.raises(SettingsError) as raised:
        load_settings(flags)
    assert f"{field}: Input should be greater than 0" in str(raised.value)


def test_scout_settings_naming_a_missing_file_is_an_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    missing = tmp_path / "nowhere" / "settings.yaml"
    monkeypatch.setenv("SCOUT_SETTINGS", str(missing))
    with pytest.raises(SettingsError) as raised:
        load_settings()
    assert str(raised.value).startswith(f"SCOUT_SETTINGS names {missing}, which does not exist")


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("model: [unclosed\n", "is not valid YAML"),
        ("- a list\n- not a mapping\n", "must hold a mapping of setting: value"),
        ("nonsense: 1\n", "nonsense: Extra inputs are not permitted"),
        ("mode: yolo\n", "mode: Input should be 'plan', 'ask', 'auto-safe' or 'ci'"),
    ],
)
def test_a_bad_settings_file_says_what_is_wrong(settings_file, text: str, message: str) -> None:
    path = settings_file(text)
    with pytest.raises(SettingsError) as raised:
        load_settings()
    assert message in str(raised.value) and str(path) in str(raised.value)


def test_a_variable_is_read_in_any_case_and_others_are_not_settings(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("scout_max_turns", "9")
    monkeypatch.setenv("SCOUT_MCP_TOKEN", "not a setting")  # Scout's other variables
    monkeypatch.setenv("SCOUT_WALL_DIR", "/elsewhere")
    assert load_settings().max_turns == 9


def test_a_list_or_mapping_variable_is_json_and_mappings_merge_key_by_key(
    settings_file, monkeypatch: pytest.MonkeyPatch
) -> None:
    settings_file("rules:\n  deny: ['ssh_exec(command=\"rm *\")']\nweb_allowed_hosts: [a.org]\n")
    monkeypatch.setenv("SCOUT_RULES", '{"allow": ["ssh_exec(command=\\"ls *\\")"]}')
    monkeypatch.setenv("SCOUT_WEB_ALLOWED_HOSTS", '["b.org"]')
    settings = load_settings()
    assert settings.rules == {
        "deny": ['ssh_exec(command="rm *")'],
        "allow": ['ssh_exec(command="ls *")'],
    }
    assert settings.web_allowed_hosts == ["b.org"]  # a list is replaced, not merged


def test_a_scalar_variable_is_its_text(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SCOUT_MODEL", '["not", "json-decoded"]')
    monkeypatch.setenv("SCOUT_TRUST_NEW_HOSTS", "true")
    monkeypatch.setenv("SCOUT_INVENTORY", "~/hosts.yaml")
    settings = load_settings()
    assert settings.model == '["not", "json-decoded"]'
    assert settings.trust_new_hosts is True
    assert settings.inventory == Path("~/hosts.yaml").expanduser()
