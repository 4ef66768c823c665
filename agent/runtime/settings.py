"""Settings: the one place for every default, then the settings file, the environment and flags.

The file is YAML (`scout init` writes a commented one; default ~/.scout/settings.yaml, or the
file $SCOUT_SETTINGS names, which must exist). Environment: `SCOUT_<FIELD>` for any field, then
`ANTHROPIC_API_KEY` and `ANTHROPIC_BASE_URL`. Flags given on the command line win over everything.
pydantic-settings reads the sources; pydantic validates the merged values.

`Settings(...)` built in code holds only what it is given and the defaults; `load_settings()`
reads the file, the environment and the flags. The session's budgets and the executor's limits
are derived from here, so they have no defaults of their own.
"""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal
from urllib.parse import urlsplit

from pydantic import Field, SecretStr, ValidationError, field_validator
from pydantic.fields import FieldInfo
from pydantic_core import PydanticCustomError
from pydantic_settings import (
    BaseSettings,
    PydanticBaseSettingsSource,
    SettingsConfigDict,
    YamlConfigSettingsSource,
)
from pydantic_settings import SettingsError as SourceError

from agent.safety.modes import Mode
from tools.text.validation import validation_problems
from tools.text.yaml_files import YAMLSyntaxError, read_yaml

if TYPE_CHECKING:
    from agent.loop.compaction import CompactionPolicy
    from agent.loop.executor import ExecutorLimits
    from agent.loop.session import Budgets
    from agent.safety.redact import Redactor

ANTHROPIC_ENV = {"api_key": "ANTHROPIC_API_KEY", "base_url": "ANTHROPIC_BASE_URL"}


def scout_home() -> Path:
    return Path(os.environ.get("SCOUT_HOME", Path.home() / ".scout")).expanduser()


class SettingsError(Exception):
    """The settings file or environment holds a value Scout cannot use; says which and why."""


class Settings(BaseSettings):
    model_config = SettingsConfigDict(extra="forbid", env_prefix="SCOUT_")

    model: str = "claude-sonnet-4-5"
    api_key: SecretStr | None = None
    base_url: str | None = None
    mode: Mode = "ask"
    inventory: Path | None = None
    transcripts_dir: Path = Field(default_factory=lambda: scout_home() / "transcripts")
    log_file: Path = Field(default_factory=lambda: scout_home() / "logs" / "scout.log")
    web_cache_dir: Path = Field(default_factory=lambda: scout_home() / "web-cache")
    # one record per proven deployment (agent/runtime/deployment_record.py): scout status reads them
    deployments_dir: Path = Field(default_factory=lambda: scout_home() / "deployments")
    max_turns: int = Field(60, gt=0)
    max_output_tokens: int = Field(400_000, gt=0)
    max_cost_usd: float = Field(10.0, gt=0)
    max_tokens_per_turn: int = Field(8192, gt=0)
    batch_result_chars: int = Field(
        40_000, gt=0, description="What one turn's tool results may add up to, in characters."
    )
    compact_history: bool = True
    compact_keep_turns: int = Field(
        2, ge=1, description="The newest model turns whose results are never compacted."
    )
    compact_min_chars: int = Field(500, ge=0, description="Shorter results stay whole.")
    compact_fold_after_turns: int = Field(
        6, ge=0, description="Older turns fold into the briefing's log (0: never)."
    )
    compact_chunk_chars: int = Field(
        16_000, ge=0, description="Compact only when at least this much can go at once."
    )
    tool_timeout_s: float = Field(300.0, gt=0)
    max_concurrency: int = Field(32, gt=0, description="Tool calls running at once.")
    per_key_concurrency: int = Field(8, gt=0, description="Calls at once on one host.")
    trust_new_hosts: bool = False
    rules: dict[Literal["allow", "ask", "deny"], list[str]] = Field(default_factory=dict)
    webhook_url: str | None = None
    webhook_secret_env: str = "SCOUT_WEBHOOK_SECRET"
    webhook_allow_insecure_http: bool = False
    approval_timeout_s: float = Field(900.0, gt=0)
    web_allowed_hosts: list[str] = Field(default_factory=list)

    @classmethod
    def settings_customise_sources(
        cls,
        settings_cls: type[BaseSettings],
        init_settings: PydanticBaseSettingsSource,
        env_settings: PydanticBaseSettingsSource,
        dotenv_settings: PydanticBaseSettingsSource,
        file_secret_settings: PydanticBaseSettingsSource,
    ) -> tuple[PydanticBaseSettingsSource, ...]:
        """Built in code, settings hold what they are given: no file or environment leaks in."""
        return (init_settings,)

    @property
    def can_reach_model(self) -> bool:
        """A key, or a base URL (a proxy or a local Messages-API server) that needs none."""
        return self.api_key is not None or bool(self.base_url)

    def redactor(self) -> Redactor:
        """A redactor that knows the session's API key; here, not in the builder, so that the
        faces that only log (recon, doctor, exec) start without the session's machinery."""
        from agent.safety.redact import Redactor

        redactor = Redactor()
        if self.api_key is not None:
            redactor.add_secret(self.api_key.get_secret_value())
        return redactor

    def budgets(self) -> Budgets:
        from agent.loop.session import Budgets

        return Budgets(
            max_turns=self.max_turns,
            max_output_tokens=self.max_output_tokens,
            max_cost_usd=self.max_cost_usd,
            max_tokens_per_turn=self.max_tokens_per_turn,
        )

    def compaction_policy(self) -> CompactionPolicy:
        from agent.loop.compaction import CompactionPolicy

        return CompactionPolicy(
            enabled=self.compact_history,
            keep_turns=self.compact_keep_turns,
            min_chars=self.compact_min_chars,
            chunk_chars=self.compact_chunk_chars,
            fold_after_turns=self.compact_fold_after_turns,
        )

    def executor_limits(self) -> ExecutorLimits:
        from agent.loop.executor import ExecutorLimits

        return ExecutorLimits(
            default_timeout_s=self.tool_timeout_s,
            max_concurrency=self.max_concurrency,
            per_key_concurrency=self.per_key_concurrency,
        )

    @field_validator("inventory", "transcripts_dir", "log_file", "web_cache_dir", "deployments_dir")
    @classmethod
    def _expand_home(cls, path: Path | None) -> Path | None:
        return path.expanduser() if path is not None else None

    @field_validator("base_url")
    @classmethod
    def _base_url_root(cls, url: str | None) -> str | None:
        """The SDK appends /v1/messages itself, so an OpenAI-style URL ending in /v1 would 404."""
        if not url:
            return None
        parts = urlsplit(url)
        if parts.scheme not in ("http", "https") or not parts.netloc:
            raise ValueError(f"{url!r} is not an http(s) URL (e.g. http://10.0.0.5:8000)")
        if parts.path.rstrip("/").endswith("/v1"):
            root = url.rstrip("/").removesuffix("/v1")
            raise ValueError(f"give the server's root, {root!r}: Scout adds /v1/messages itself")
        return url

    @field_validator("rules")
    @classmethod
    def _rules_parse(cls, rules: dict[str, list[str]]) -> dict[str, list[str]]:
        """Each rule reads (one line naming the rule when not); that its tool and fields are
        Scout's, and what an allow rule must name, is checked against the tools, which this
        does not import (runtime/settings_rules.py, at a session's start and `policy check`)."""
        if not any(rules.values()):  # nothing to parse: the rule engine stays unimported
            return rules
        from agent.safety.rules import RuleError, RuleSet

        try:
            RuleSet.from_config(rules)
        except RuleError as exc:  # its own words, without pydantic's "Value error, "
            raise PydanticCustomError("rule", "{problem}", {"problem": str(exc)}) from None
        return rules


PATH_FIELDS = ("inventory", "transcripts_dir", "log_file", "web_cache_dir", "deployments_dir")


class _SettingsFile(YamlConfigSettingsSource):
    """The YAML settings file; a file that is not YAML, or not a mapping, is a SettingsError.

    Its relative paths are read from its own folder (as the inventory's are), so a settings file
    written by `scout init --dir X` names the inventory beside it wherever Scout runs from.
    """

    def _read_file(self, file_path: Any) -> dict[str, Any]:
        path = Path(file_path)
        try:
            loaded = read_yaml(path) or {}
        except YAMLSyntaxError as exc:
            raise SettingsError(f"{file_path} is not valid YAML: {exc}") from None
        if not isinstance(loaded, dict):
            raise SettingsError(f"{file_path} must hold a mapping of setting: value")
        for name in PATH_FIELDS:
            value = loaded.get(name)
            if isinstance(value, str) and not Path(value).expanduser().is_absolute():
                loaded[name] = str(path.parent / value)
        return loaded


class _AnthropicEnv(PydanticBaseSettingsSource):
    """The SDK's own variables, for the key and the base URL, below any SCOUT_* one."""

    def get_field_value(self, field: FieldInfo, field_name: str) -> tuple[Any, str, bool]:
        variable = ANTHROPIC_ENV.get(field_name)
        return (os.environ.get(variable) if variable else None), field_name, False

    def __call__(self) -> dict[str, Any]:
        return {name: os.environ[var] for name, var in ANTHROPIC_ENV.items() if os.environ.get(var)}


class _LoadedSettings(Settings):
    """Settings as `load_settings` reads them: flags, SCOUT_*, ANTHROPIC_*, the file, defaults."""

    @classmethod
    def settings_customise_sources(
        cls,
        settings_cls: type[BaseSettings],
        init_settings: PydanticBaseSettingsSource,
        env_settings: PydanticBaseSettingsSource,
        dotenv_settings: PydanticBaseSettingsSource,
        file_secret_settings: PydanticBaseSettingsSource,
    ) -> tuple[PydanticBaseSettingsSource, ...]:
        file = _SettingsFile(settings_cls, yaml_file=settings_path())
        return (init_settings, env_settings, _AnthropicEnv(settings_cls), file)


def settings_path() -> Path:
    """The settings file: $SCOUT_SETTINGS if set, else settings.yaml in the Scout home."""
    named = os.environ.get("SCOUT_SETTINGS")
    return Path(named).expanduser() if named else scout_home() / "settings.yaml"


def load_settings(flags: dict[str, Any] | None = None) -> Settings:
    """Every source merged and validated; any problem is a SettingsError that says where."""
    path = settings_path()
    if os.environ.get("SCOUT_SETTINGS") and not path.is_file():
        raise SettingsError(
            f"SCOUT_SETTINGS names {path}, which does not exist; create it (scout init writes "
            "one) or unset SCOUT_SETTINGS to use ~/.scout/settings.yaml"
        )
    given = {key: value for key, value in (flags or {}).items() if value is not None}
    try:
        return _LoadedSettings(**given)
    except SourceError as exc:  # pydantic-settings could not parse a SCOUT_* value as JSON
        raise SettingsError(_unparsed_variable(exc)) from None
    except ValidationError as exc:
        problems = "; ".join(validation_problems(exc))
        raise SettingsError(f"invalid settings ({path} / SCOUT_* / flags): {problems}") from exc


def _unparsed_variable(exc: SourceError) -> str:
    """Which SCOUT_* variable is not JSON, and how a list or mapping is written there."""
    field = re.search(r'field "(\w+)"', str(exc))
    name = f"SCOUT_{field.group(1).upper()}" if field else "a SCOUT_* variable"
    reason = f" ({exc.__cause__})" if exc.__cause__ else ""
    return (
        f"{name} is not valid JSON{reason}; a list or a mapping in the environment is written "
        """as JSON, e.g. '["a", "b"]' or '{"allow": ["rule"]}', or set it in the settings file"""
    )
