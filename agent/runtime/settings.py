"""Settings: defaults, then the settings file, then environment variables, then flags.

The file is YAML (`scout init` writes a commented one; default ~/.scout/settings.yaml or
$SCOUT_SETTINGS). Environment: `SCOUT_<FIELD>` for any field, plus `ANTHROPIC_API_KEY` and
`ANTHROPIC_BASE_URL`. Flags given on the command line win over everything.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any, Literal

import yaml
from pydantic import BaseModel, ConfigDict, Field, SecretStr, ValidationError, field_validator

Mode = Literal["plan", "ask", "auto-safe", "ci"]


def scout_home() -> Path:
    return Path(os.environ.get("SCOUT_HOME", Path.home() / ".scout")).expanduser()


class Settings(BaseModel):
    model_config = ConfigDict(extra="forbid")

    model: str = "claude-sonnet-4-5"
    api_key: SecretStr | None = None
    base_url: str | None = None
    mode: Mode = "ask"
    inventory: Path | None = None
    transcripts_dir: Path = Field(default_factory=lambda: scout_home() / "transcripts")
    log_file: Path = Field(default_factory=lambda: scout_home() / "logs" / "scout.log")
    web_cache_dir: Path = Field(default_factory=lambda: scout_home() / "web-cache")
    max_turns: int = 60
    max_output_tokens: int = 400_000
    max_cost_usd: float = 10.0
    max_tokens_per_turn: int = 8192
    tool_timeout_s: float = 300.0
    trust_new_hosts: bool = False
    rules: dict[Literal["allow", "ask", "deny"], list[str]] = Field(default_factory=dict)
    webhook_url: str | None = None
    webhook_secret_env: str = "SCOUT_WEBHOOK_SECRET"
    webhook_allow_insecure_http: bool = False
    approval_timeout_s: float = 900.0
    web_allowed_hosts: list[str] = Field(default_factory=list)

    @property
    def can_reach_model(self) -> bool:
        """A key, or a base URL (a proxy or a local Messages-API server) that needs none."""
        return self.api_key is not None or bool(self.base_url)

    @field_validator("inventory", "transcripts_dir", "log_file", "web_cache_dir")
    @classmethod
    def _expand_home(cls, path: Path | None) -> Path | None:
        return path.expanduser() if path is not None else None

    @field_validator("rules")
    @classmethod
    def _rules_parse(cls, rules: dict[str, list[str]]) -> dict[str, list[str]]:
        from agent.safety.rules import RuleSet

        RuleSet.from_config(rules)  # raises RuleError (a ValueError) with the expected form
        return rules


class SettingsError(Exception):
    """The settings file or environment holds a value Scout cannot use; says which and why."""


def _from_env(environ: dict[str, str]) -> dict[str, Any]:
    values: dict[str, Any] = {}
    for name in Settings.model_fields:
        env_name = f"SCOUT_{name.upper()}"
        if env_name in environ:
            values[name] = environ[env_name]
    if "api_key" not in values and environ.get("ANTHROPIC_API_KEY"):
        values["api_key"] = environ["ANTHROPIC_API_KEY"]
    if "base_url" not in values and environ.get("ANTHROPIC_BASE_URL"):
        values["base_url"] = environ["ANTHROPIC_BASE_URL"]
    return values


def settings_path(environ: dict[str, str] | None = None) -> Path:
    environ = dict(os.environ) if environ is None else environ
    return Path(environ.get("SCOUT_SETTINGS", scout_home() / "settings.yaml")).expanduser()


def load_settings(
    flags: dict[str, Any] | None = None, environ: dict[str, str] | None = None
) -> Settings:
    environ = dict(os.environ) if environ is None else environ
    path = settings_path(environ)
    values: dict[str, Any] = {}
    if path.is_file():
        try:
            loaded = yaml.safe_load(path.read_text(encoding="utf-8")) or {}
        except yaml.YAMLError as exc:
            raise SettingsError(f"{path} is not valid YAML: {exc}") from exc
        if not isinstance(loaded, dict):
            raise SettingsError(f"{path} must hold a mapping of setting: value")
        values.update(loaded)
    values.update(_from_env(environ))
    values.update({key: value for key, value in (flags or {}).items() if value is not None})
    try:
        return Settings.model_validate(values)
    except ValidationError as exc:
        problems = "; ".join(
            f"{'.'.join(str(p) for p in err['loc'])}: {err['msg']}" for err in exc.errors()
        )
        raise SettingsError(f"invalid settings ({path} / SCOUT_* / flags): {problems}") from exc
