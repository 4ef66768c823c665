"""Settings: the one place for every default, then the settings file, the environment and flags.

The file is YAML (`scout init` writes a commented one; default ~/.scout/settings.yaml, or the
file $SCOUT_SETTINGS names, which must exist). Environment: `SCOUT_<FIELD>` for any field (any
case; a list or a mapping written as JSON), then `ANTHROPIC_API_KEY` and `ANTHROPIC_BASE_URL`.
Flags given on the command line win over everything; a mapping given by two sources is merged
key by key. pydantic validates the merged values.

`Settings(...)` built in code holds only what it is given and the defaults; `load_settings()`
reads the file, the environment and the flags. The session's budgets and the executor's limits
are derived from here, so they have no defaults of their own.

Why no pydantic-settings, which read these sources before: every face loads the settings, and
importing it cost more CPU than all of pydantic (it imports asyncio, dotenv, importlib.metadata
and its own settings model for features Scout does not use): 50 to 60 ms of each command's
start here, spent by `scout recon` while its hosts answer, on the cores they need. The rules
above are the ones it applied, kept as they were (tests/unit/test_settings.py).
"""

from __future__ import annotations

import json
import os
import types
import typing
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal
from urllib.parse import urlsplit

from pydantic import BaseModel, ConfigDict, Field, SecretStr, ValidationError, field_validator
from pydantic_core import PydanticCustomError

from agent.safety.modes import Mode
from tools.text.validation import validation_problems
from tools.text.yaml_files import YAMLSyntaxError, read_yaml

if TYPE_CHECKING:
    from agent.loop.compaction import CompactionPolicy
    from agent.loop.executor import ExecutorLimits
    from agent.loop.session import Budgets
    from agent.safety.redact import Redactor

ENV_PREFIX = "SCOUT_"
# what a SCOUT_* variable holds as JSON (a field of one of these types, or of one or None)
STRUCTURED = (list, tuple, set, frozenset, dict, BaseModel)
ANTHROPIC_ENV = {"api_key": "ANTHROPIC_API_KEY", "base_url": "ANTHROPIC_BASE_URL"}


def scout_home() -> Path:
    return Path(os.environ.get("SCOUT_HOME", Path.home() / ".scout")).expanduser()


class SettingsError(Exception):
    """The settings file or environment holds a value Scout cannot use; says which and why."""


class Settings(BaseModel):
    # defaults are validated too: a default path is expanded as a given one is
    model_config = ConfigDict(extra="forbid", validate_default=True)

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
    rules: dict[Literal["allow", "ask", "deny"], list[str]] = {}
    webhook_url: str | None = None
    webhook_secret_env: str = "SCOUT_WEBHOOK_SECRET"
    webhook_allow_insecure_http: bool = False
    approval_timeout_s: float = Field(900.0, gt=0)
    web_allowed_hosts: list[str] = []

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


def _file_values(path: Path) -> dict[str, Any]:
    """The YAML settings file's values (none where there is no file); a file that is not YAML,
    or not a mapping, is a SettingsError.

    Its relative paths are read from its own folder (as the inventory's are), so a settings file
    written by `scout init --dir X` names the inventory beside it wherever Scout runs from.
    """
    if not path.is_file():
        return {}
    try:
        loaded = read_yaml(path) or {}
    except YAMLSyntaxError as exc:
        raise SettingsError(f"{path} is not valid YAML: {exc}") from None
    if not isinstance(loaded, dict):
        raise SettingsError(f"{path} must hold a mapping of setting: value")
    for name in PATH_FIELDS:
        value = loaded.get(name)
        if isinstance(value, str) and not Path(value).expanduser().is_absolute():
            loaded[name] = str(path.parent / value)
    return loaded


def _environment_values() -> dict[str, Any]:
    """SCOUT_<FIELD> for each field, its name in any case; a list or a mapping is JSON."""
    named = {name.lower(): value for name, value in os.environ.items()}
    values: dict[str, Any] = {}
    for field, info in Settings.model_fields.items():
        value = named.get(f"{ENV_PREFIX}{field}".lower())
        if value is None:
            continue
        if _is_structured(info.annotation):
            try:
                value = json.loads(value)
            except ValueError as exc:
                raise SettingsError(_unparsed_variable(field, exc)) from None
        values[field] = value
    return values


def _is_structured(annotation: Any) -> bool:
    """A list, a mapping or a model (or one of them or None): what a variable gives as JSON."""
    origin = typing.get_origin(annotation)
    if origin in (typing.Union, types.UnionType):
        return any(_is_structured(arm) for arm in typing.get_args(annotation))
    kind = origin or annotation
    return isinstance(kind, type) and issubclass(kind, STRUCTURED)


def _anthropic_values() -> dict[str, Any]:
    """The SDK's own variables, for the key and the base URL, below any SCOUT_* one."""
    return {name: os.environ[var] for name, var in ANTHROPIC_ENV.items() if os.environ.get(var)}


def _layered(*layers: dict[str, Any]) -> dict[str, Any]:
    """The layers' values, a later layer's winning; a mapping in two layers merged key by key."""
    merged: dict[str, Any] = {}
    for layer in layers:
        for key, value in layer.items():
            below = merged.get(key)
            merged[key] = (
                _layered(below, value)
                if isinstance(below, dict) and isinstance(value, dict)
                else value
            )
    return merged


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
    values = _layered(_file_values(path), _anthropic_values(), _environment_values(), given)
    try:
        return Settings.model_validate(values)
    except ValidationError as exc:
        problems = "; ".join(validation_problems(exc))
        raise SettingsError(f"invalid settings ({path} / SCOUT_* / flags): {problems}") from exc


def _unparsed_variable(field: str, problem: ValueError) -> str:
    """Which SCOUT_* variable is not JSON, and how a list or mapping is written there."""
    return (
        f"{ENV_PREFIX}{field.upper()} is not valid JSON ({problem}); a list or a mapping in the "
        """environment is written as JSON, e.g. '["a", "b"]' or '{"allow": ["rule"]}', or set it """
        "in the settings file"
    )
