"""The inventory file's shape (tools/ssh/inventory.py resolves it), checked without pydantic.

Why by hand: `scout recon` asks its hosts as soon as it has read the inventory, and importing
pydantic and building models for five small mappings cost a fresh process more than reading
and checking them. What is checked is what the models checked (the same fields, types, the
port's range, nothing unknown), each problem a `where: what` line in the words pydantic uses
(tools/text/validation.py), every problem at once. Stricter where pydantic's lax mode guessed:
`port: true` or `port: "22_0"` is refused, not read as 1 or 220. Its classes are NamedTuples,
each field given where the file is read: a dataclass would import `dataclasses` and `inspect`
before recon starts `ssh`.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, NamedTuple

MIN_PORT, MAX_PORT = 1, 65535


class InventoryShapeError(ValueError):
    """The data does not have the inventory file's shape; `problems` are `where: what` lines."""

    def __init__(self, problems: list[str]) -> None:
        self.problems = problems
        super().__init__("; ".join(problems))


class Defaults(NamedTuple):
    user: str | None
    identity_file: Path | None
    port: int | None


class HostEntry(NamedTuple):
    address: str | None
    port: int | None
    user: str | None
    identity_file: Path | None
    jump: str | None
    roles: list[str]
    labels: dict[str, str]
    ssh_alias: str | None


class InventoryFile(NamedTuple):
    hosts: dict[str, HostEntry]
    known_hosts: Path | None
    ssh_config: Path | None
    defaults: Defaults


class _Checker:
    """Collects the problems of one document while it converts its values."""

    def __init__(self) -> None:
        self.problems: list[str] = []

    def fail(self, where: tuple[object, ...], what: str) -> None:
        self.problems.append(f"{'.'.join(str(part) for part in where) or '(input)'}: {what}")

    def text(self, value: Any, where: tuple[object, ...]) -> str | None:
        if value is None or isinstance(value, str):
            return value
        self.fail(where, "Input should be a valid string")
        return None

    def path(self, value: Any, where: tuple[object, ...]) -> Path | None:
        if value is None or isinstance(value, Path):
            return value
        if isinstance(value, str):
            return Path(value)
        self.fail(where, "Input is not a valid path")
        return None

    def port(self, value: Any, where: tuple[object, ...]) -> int | None:
        """A port number as pydantic's `int` with 1..65535 read it, minus its lax guesses."""
        if value is None:
            return None
        number = port_number(value)
        if isinstance(number, str):
            self.fail(where, number)
            return None
        return number

    def texts(self, value: Any, where: tuple[object, ...]) -> list[str]:
        if not isinstance(value, list):
            self.fail(where, "Input should be a valid list")
            return []
        return [item for i, item in enumerate(value) if self.text(item, (*where, i)) is not None]

    def labels(self, value: Any, where: tuple[object, ...]) -> dict[str, str]:
        if not isinstance(value, dict):
            self.fail(where, "Input should be a valid dictionary")
            return {}
        labels = {}
        for key, item in value.items():
            if not isinstance(key, str):
                self.fail((*where, key, "[key]"), "Input should be a valid string")
            elif self.text(item, (*where, key)) is not None:
                labels[key] = item
        return labels

    def mapping(
        self, value: Any, where: tuple[object, ...], known: tuple[str, ...] | None = None
    ) -> dict[Any, Any]:
        """`value` as a mapping (of `known` keys only, each other key a problem), else {}."""
        if not isinstance(value, dict):
            self.fail(where, "Input should be a valid dictionary")
            return {}
        for key in value:
            if known is not None and key not in known:
                self.fail((*where, key), "Extra inputs are not permitted")
        return value


def port_number(value: Any) -> int | str:
    """`value` as a port number, or what is wrong with it (in pydantic's words)."""
    if isinstance(value, bool):
        return "Input should be a valid integer"
    if isinstance(value, float):
        if not value.is_integer():
            return "Input should be a valid integer, got a number with a fractional part"
        value = int(value)
    if isinstance(value, str):
        digits = value.strip()
        if not (digits.isascii() and digits.isdigit()):
            return "Input should be a valid integer, unable to parse string as an integer"
        value = int(digits)
    if not isinstance(value, int):
        return "Input should be a valid integer"
    if value < MIN_PORT:
        return f"Input should be greater than or equal to {MIN_PORT}"
    if value > MAX_PORT:
        return f"Input should be less than or equal to {MAX_PORT}"
    return value


_FILE_KEYS = ("known_hosts", "ssh_config", "defaults", "hosts")
_DEFAULTS_KEYS = ("user", "identity_file", "port")
_HOST_KEYS = ("address", "port", "user", "identity_file", "jump", "roles", "labels", "ssh_alias")


def _host_entry(check: _Checker, value: Any, where: tuple[object, ...]) -> HostEntry:
    raw = check.mapping(value, where, _HOST_KEYS)
    return HostEntry(
        address=check.text(raw.get("address"), (*where, "address")),
        port=check.port(raw.get("port"), (*where, "port")),
        user=check.text(raw.get("user"), (*where, "user")),
        identity_file=check.path(raw.get("identity_file"), (*where, "identity_file")),
        jump=check.text(raw.get("jump"), (*where, "jump")),
        roles=check.texts(raw["roles"], (*where, "roles")) if "roles" in raw else [],
        labels=check.labels(raw["labels"], (*where, "labels")) if "labels" in raw else {},
        ssh_alias=check.text(raw.get("ssh_alias"), (*where, "ssh_alias")),
    )


def read_inventory_file(data: Any) -> InventoryFile:
    """The inventory file's data (its YAML document) checked and typed; InventoryShapeError
    lists every problem."""
    check = _Checker()
    raw = check.mapping(data, (), _FILE_KEYS)
    defaults_raw = check.mapping(raw.get("defaults", {}), ("defaults",), _DEFAULTS_KEYS)
    defaults = Defaults(
        user=check.text(defaults_raw.get("user"), ("defaults", "user")),
        identity_file=check.path(defaults_raw.get("identity_file"), ("defaults", "identity_file")),
        port=check.port(defaults_raw.get("port"), ("defaults", "port")),
    )
    hosts: dict[str, HostEntry] = {}
    if isinstance(data, dict) and "hosts" not in raw:
        check.fail(("hosts",), "Field required")
    elif isinstance(data, dict):
        for name, entry in check.mapping(raw["hosts"], ("hosts",)).items():
            if isinstance(name, str):
                hosts[name] = _host_entry(check, entry, ("hosts", name))
            else:
                check.fail(("hosts", name, "[key]"), "Input should be a valid string")
    known_hosts = check.path(raw.get("known_hosts"), ("known_hosts",))
    ssh_config = check.path(raw.get("ssh_config"), ("ssh_config",))
    if check.problems:
        raise InventoryShapeError(check.problems)
    return InventoryFile(hosts, known_hosts, ssh_config, defaults)
