"""Release files: `/etc/os-release`, `/etc/lsb-release`, `/etc/dgx-release` (KEY=value)."""

import re
import shlex

from pydantic import BaseModel

from tools.recon.parsers.errors import ParseError

_ASSIGNMENT = re.compile(r"^(?:export\s+)?(?P<key>[A-Za-z_][A-Za-z0-9_]*)=(?P<value>.*)$")


def parse_shell_assignments(text: str, what: str) -> list[tuple[str, str]]:
    """Every `KEY=value` line in order (quotes optional); blank and `#` lines are skipped."""
    pairs = []
    for line in text.splitlines():
        stripped = line.strip()
        if not stripped or stripped.startswith("#"):
            continue
        match = _ASSIGNMENT.match(stripped)
        if match is None:
            continue
        pairs.append((match["key"], _unquote(match["value"])))
    if not pairs:
        raise ParseError(f'{what} lines like KEY="value"', text)
    return pairs


def _unquote(value: str) -> str:
    try:
        words = shlex.split(value)
    except ValueError:
        return value.strip().strip("\"'")
    return " ".join(words)


class OsRelease(BaseModel):
    id: str | None = None
    id_like: str | None = None
    name: str | None = None
    pretty_name: str | None = None
    version: str | None = None
    version_id: str | None = None
    version_codename: str | None = None
    fields: dict[str, str]


def parse_os_release(text: str) -> OsRelease:
    """Read `/etc/os-release`."""
    fields = dict(parse_shell_assignments(text, "/etc/os-release"))
    return OsRelease(
        id=fields.get("ID"),
        id_like=fields.get("ID_LIKE"),
        name=fields.get("NAME"),
        pretty_name=fields.get("PRETTY_NAME"),
        version=fields.get("VERSION"),
        version_id=fields.get("VERSION_ID"),
        version_codename=fields.get("VERSION_CODENAME"),
        fields=fields,
    )


class LsbRelease(BaseModel):
    distributor_id: str | None = None
    release: str | None = None
    codename: str | None = None
    description: str | None = None


def parse_lsb_release(text: str) -> LsbRelease:
    """Read `/etc/lsb-release`."""
    fields = dict(parse_shell_assignments(text, "/etc/lsb-release"))
    return LsbRelease(
        distributor_id=fields.get("DISTRIB_ID"),
        release=fields.get("DISTRIB_RELEASE"),
        codename=fields.get("DISTRIB_CODENAME"),
        description=fields.get("DISTRIB_DESCRIPTION"),
    )


class DgxRelease(BaseModel):
    """DGX OS identity. `ota_version` is the last OTA applied; factory images have none."""

    name: str | None = None
    pretty_name: str | None = None
    swbuild_version: str | None = None
    swbuild_date: str | None = None
    commit_id: str | None = None
    platform: str | None = None
    serial_number: str | None = None
    ota_version: str | None = None
    ota_date: str | None = None
    ota_versions: list[str]
    fields: dict[str, str]


def parse_dgx_release(text: str) -> DgxRelease:
    """Read `/etc/dgx-release`: repeated keys (one OTA line per update) — the last one wins."""
    pairs = parse_shell_assignments(text, "/etc/dgx-release")
    fields = dict(pairs)
    return DgxRelease(
        name=fields.get("DGX_NAME"),
        pretty_name=fields.get("DGX_PRETTY_NAME"),
        swbuild_version=fields.get("DGX_SWBUILD_VERSION"),
        swbuild_date=fields.get("DGX_SWBUILD_DATE"),
        commit_id=fields.get("DGX_COMMIT_ID"),
        platform=fields.get("DGX_PLATFORM"),
        serial_number=fields.get("DGX_SERIAL_NUMBER"),
        ota_version=fields.get("DGX_OTA_VERSION"),
        ota_date=fields.get("DGX_OTA_DATE"),
        ota_versions=[value for key, value in pairs if key == "DGX_OTA_VERSION"],
        fields=fields,
    )
