"""The inventory: which hosts Scout may reach, how to log in, and which host is the jump.

File format (YAML)::

    known_hosts: ~/.scout/known_hosts      # optional; default ~/.ssh/known_hosts
    ssh_config: ~/.ssh/config              # optional; OpenSSH client config to resolve aliases
    defaults: {user: aurora, identity_file: ~/.ssh/id_ed25519, port: 22}
    hosts:
      spark-a: {address: 10.1.230.180, roles: [head], labels: {rack: r1}}
      spark-b: {address: 192.168.200.13, jump: spark-a, roles: [worker]}
      spark-c: {ssh_alias: myspark}   # Hostname/Port/User/IdentityFile/ProxyJump: ssh_config

Each setting is taken from the first place that has it: the host's own entry, then the OpenSSH
config (for hosts with `ssh_alias`, or any host without an `address` when `ssh_config` is given),
then `defaults`, then the built-in default (port 22, the local user name). Relative paths are read
from the inventory file's folder.

How the operator's own `ssh` logs in applies to every host: the config's `IdentityAgent` (a
socket, `none`, or unset for $SSH_AUTH_SOCK), `IdentitiesOnly` and, when neither the entry nor
`defaults` names a key, its `IdentityFile` lines (in order; one that is not there is skipped as
ssh skips it, though a .pub alone still picks the agent's copy of the key), matched on the alias
or, for a host given by address, on that address (as `ssh ADDRESS` would). The config is
`ssh_config`, else ~/.ssh/config when it exists.
"""

from __future__ import annotations

import getpass
from pathlib import Path
from typing import Any, NamedTuple

from tools.ssh.errors import InventoryError, UnknownHostError
from tools.ssh.inventory_file import (
    HostEntry,
    InventoryFile,
    InventoryShapeError,
    port_number,
    read_inventory_file,
)
from tools.text.yaml_files import YAMLSyntaxError, read_yaml

DEFAULT_KNOWN_HOSTS = Path("~/.ssh/known_hosts")
DEFAULT_SSH_CONFIG = Path("~/.ssh/config")


class HostSpec(NamedTuple):
    """Everything needed to open an SSH connection to one host.

    A NamedTuple, as the inventory file's classes are (tools/ssh/inventory_file.py says why):
    `scout recon` reads the inventory before it starts `ssh`, and a dataclass would import
    `dataclasses`, and with it `inspect`, first (bench/startup.py: some 10 ms of every recon).
    Every field is given where the inventory is resolved (_host_spec)."""

    name: str
    address: str
    port: int
    user: str
    identity_file: Path | None
    # the config's further IdentityFile keys, tried after identity_file (one of the config's too)
    more_identity_files: tuple[Path, ...]
    jump: str | None
    roles: list[str]
    labels: dict[str, str]
    ssh_alias: str | None
    # IdentityAgent as the OpenSSH config gives it: a socket path, "none" (no agent) or
    # "SSH_AUTH_SOCK"; None when the config does not set it (then $SSH_AUTH_SOCK, as for ssh).
    identity_agent: str | None
    identities_only: bool  # IdentitiesOnly: only the agent's keys that are identity files

    @property
    def endpoint(self) -> str:
        return f"{self.address}:{self.port}"

    @property
    def identity_files(self) -> list[Path]:
        """Every key to offer, in order (the agent's keys come before them)."""
        first = [self.identity_file] if self.identity_file else []
        return [*first, *self.more_identity_files]


SIMULATOR_LABEL = "simulator"  # a host label the simulator's inventories carry


class Inventory(NamedTuple):
    """The resolved inventory: host specs by name, plus where host keys and SSH config live."""

    hosts: dict[str, HostSpec]
    known_hosts: Path | None = None
    ssh_config: Path | None = None

    @classmethod
    def load(cls, path: str | Path) -> Inventory:
        """Read and resolve an inventory YAML file; any problem is an `InventoryError`."""
        path = Path(path).expanduser()
        try:
            data = read_yaml(path)
        except OSError as exc:
            raise InventoryError(
                f"cannot read inventory {path}: {exc.strerror or exc}; check the path."
            ) from None
        except YAMLSyntaxError as exc:
            raise InventoryError(f"inventory {path} is not valid YAML: {exc}") from None
        if not isinstance(data, dict):
            raise InventoryError(f"inventory {path} must be a mapping with a `hosts:` section.")
        return cls.from_dict(data, base_dir=path.parent, source=str(path))

    @classmethod
    def from_dict(
        cls, data: dict[str, Any], *, base_dir: Path | None = None, source: str = "inventory"
    ) -> Inventory:
        """Resolve inventory data (the YAML structure) into host specs."""
        try:
            raw = read_inventory_file(data)
        except InventoryShapeError as exc:
            raise InventoryError(f"{source} is not valid: {exc}") from None
        if not raw.hosts:
            raise InventoryError(
                f"{source} lists no hosts; add one under `hosts:`, e.g. "
                "`hosts: {spark-a: {address: 10.0.0.5}}` (scout init writes an example)."
            )
        known_hosts = _local_path(raw.known_hosts, base_dir)
        ssh_config = _local_path(raw.ssh_config, base_dir)
        resolved = {
            name: _resolve_host(name, entry, raw, ssh_config, base_dir, source)
            for name, entry in raw.hosts.items()
        }
        hosts = {name: spec for name, (spec, _) in resolved.items()}
        hosts = {
            name: _with_config_jump(spec, proxy_jump, hosts, source)
            for name, (spec, proxy_jump) in resolved.items()
        }
        _check_jumps(hosts, source)
        return cls(hosts, known_hosts, ssh_config)

    @property
    def known_hosts_path(self) -> Path:
        """Where host keys are verified and recorded."""
        return self.known_hosts or DEFAULT_KNOWN_HOSTS.expanduser()

    def get(self, name: str) -> HostSpec:
        try:
            return self.hosts[name]
        except KeyError:
            raise UnknownHostError(name, self.names()) from None

    def names(self) -> list[str]:
        return list(self.hosts)

    def simulated(self) -> bool:
        """Whether every host is the simulator's: it labels each `simulator: <scenario>` in the
        inventories it writes (sim/cluster.py). Unlabelled hosts are taken for real ones."""
        return bool(self.hosts) and all(SIMULATOR_LABEL in h.labels for h in self.hosts.values())

    def where(self) -> dict[str, str]:
        """Each host as `user@address:port`, `via` its jump host: which machine a name reaches,
        as a session's transcript records it (a resume elsewhere is caught by comparing)."""
        return {
            name: f"{spec.user}@{spec.endpoint}" + (f" via {spec.jump}" if spec.jump else "")
            for name, spec in self.hosts.items()
        }

    def addresses(self) -> set[str]:
        """Every host's address and name: what a walled read may name as a destination."""
        return {spec.address for spec in self.hosts.values()} | set(self.hosts)

    def address_book(self) -> dict[str, str]:
        """Each host's name and address, to its address: where a walled read may connect."""
        book = {spec.address: spec.address for spec in self.hosts.values()}
        return book | {name: spec.address for name, spec in self.hosts.items()}


def _local_path(path: Path | None, base_dir: Path | None) -> Path | None:
    if path is None:
        return None
    path = path.expanduser()
    if not path.is_absolute() and base_dir is not None:
        path = base_dir / path
    return path


def _config_values(alias: str, config_path: Path) -> dict[str, Any]:
    """The OpenSSH client settings that apply to `alias` in `config_path` (asyncssh's reader,
    imported only when there is a config to read)."""
    from asyncssh.config import SSHClientConfig

    config = SSHClientConfig.load(
        None, [config_path], False, False, False, getpass.getuser(), (), alias, ()
    )
    identities = [Path(path).expanduser() for path in config.get("IdentityFile") or ()]
    agent = config.get("IdentityAgent", ())  # asyncssh reads `none` as None
    return {
        "address": config.get("Hostname"),
        "port": config.get("Port"),
        "user": config.get("User"),
        # ssh skips a key that is not there; a .pub alone still picks the agent's copy
        "identity_files": [p for p in identities if p.is_file() or Path(f"{p}.pub").is_file()],
        "identity_agent": None if agent == () else (agent or "none"),
        "identities_only": bool(config.get("IdentitiesOnly")),
        "proxy_jump": config.get("ProxyJump"),
    }


def _read_config(alias: str, config_path: Path) -> dict[str, Any]:
    try:
        return _config_values(alias, config_path)
    except Exception as exc:  # asyncssh raises its own parse errors
        raise InventoryError(f"cannot read SSH config {config_path}: {exc}") from None


def _resolve_host(
    name: str,
    entry: HostEntry,
    raw: InventoryFile,
    ssh_config: Path | None,
    base_dir: Path | None,
    source: str,
) -> tuple[HostSpec, str | None]:
    """The host's spec, plus the ProxyJump its SSH config names (if the entry has no `jump:`)."""
    alias = entry.ssh_alias or (name if ssh_config is not None and entry.address is None else None)
    config_path = ssh_config or DEFAULT_SSH_CONFIG.expanduser()
    config: dict[str, Any] = {}
    if alias is not None:
        if config_path.is_file():
            config = _read_config(alias, config_path)
        elif entry.ssh_alias is not None:
            raise InventoryError(
                f"host {name!r} uses ssh_alias {alias!r} but SSH config {config_path} "
                "does not exist; set `ssh_config:` in the inventory or give `address:`."
            )
    address = entry.address or config.get("address") or entry.ssh_alias
    if not address:
        raise InventoryError(
            f"{source}: host {name!r} has no address; give `address:` or `ssh_alias:` "
            "(with `ssh_config:` pointing to an OpenSSH config that defines it)."
        )
    if alias is None and config_path.is_file():  # only how ssh logs in: a given key wins
        login = _read_config(address, config_path)
        config["identity_agent"] = login["identity_agent"]
        config["identities_only"] = login["identities_only"]
        given = entry.identity_file or raw.defaults.identity_file
        config["identity_files"] = [] if given else login["identity_files"]
    config_keys = [] if entry.identity_file else config.get("identity_files", [])
    identity_file = _local_path(
        (config_keys or [entry.identity_file or raw.defaults.identity_file])[0], base_dir
    )
    if identity_file is not None and identity_file.is_dir():
        raise InventoryError(
            f"{source}: host {name!r} has identity_file {identity_file}, which is a folder; "
            "name the private key file in it (e.g. id_ed25519)."
        )
    spec = _host_spec(name, entry, raw, config, address, identity_file, config_keys)
    port = port_number(spec.port)  # a value from the SSH config, such as Port 70000
    if isinstance(port, str):
        raise InventoryError(f"{source}: host {name!r} is not valid: port: {port}")
    return spec, None if entry.jump else config.get("proxy_jump")


def _host_spec(
    name: str,
    entry: HostEntry,
    raw: InventoryFile,
    config: dict[str, Any],
    address: str,
    identity_file: Path | None,
    config_keys: list[Path],
) -> HostSpec:
    return HostSpec(
        name=name,
        address=address,
        port=entry.port or config.get("port") or raw.defaults.port or 22,
        user=entry.user or config.get("user") or raw.defaults.user or getpass.getuser(),
        identity_file=identity_file,
        more_identity_files=tuple(config_keys[1:]),
        identity_agent=config.get("identity_agent"),
        identities_only=config.get("identities_only", False),
        jump=entry.jump,
        roles=entry.roles,
        labels=entry.labels,
        ssh_alias=entry.ssh_alias,
    )


def _with_config_jump(
    spec: HostSpec, value: str | None, hosts: dict[str, HostSpec], source: str
) -> HostSpec:
    """Turn a ProxyJump value from the SSH config into the inventory name of that host."""
    if value is None or value.lower() == "none":
        return spec
    if "," in value:
        raise InventoryError(
            f"{source}: host {spec.name!r} has a multi-hop ProxyJump {value!r} in the SSH "
            "config; list each hop as an inventory host with its own `jump:` instead."
        )
    target = value.rsplit("@", 1)[-1].split(":", 1)[0]
    for other in hosts.values():
        if target in (other.name, other.ssh_alias, other.address):
            return spec._replace(jump=other.name)
    raise InventoryError(
        f"{source}: host {spec.name!r} jumps through {value!r} (ProxyJump in the SSH config), "
        "which is not an inventory host; add it to `hosts:` so Scout can verify and reuse it."
    )


def _check_jumps(hosts: dict[str, HostSpec], source: str) -> None:
    """Every jump names a known host and no chain of jumps loops back on itself."""
    for spec in hosts.values():
        if spec.jump is not None and spec.jump not in hosts:
            known = ", ".join(hosts)
            raise InventoryError(
                f"{source}: host {spec.name!r} jumps through unknown host {spec.jump!r}; "
                f"known hosts: {known}."
            )
    for spec in hosts.values():
        chain = [spec.name]
        current = spec
        while current.jump is not None:
            if current.jump in chain:
                loop = " -> ".join([*chain[chain.index(current.jump) :], current.jump])
                raise InventoryError(
                    f"{source}: jump hosts form a cycle ({loop}); one host in it must be "
                    "reachable directly (remove its `jump:`)."
                )
            chain.append(current.jump)
            current = hosts[current.jump]
