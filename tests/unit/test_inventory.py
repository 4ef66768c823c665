"""Loading the inventory: YAML, defaults, jumps, OpenSSH aliases, and the errors users meet."""

from pathlib import Path

import pytest

from tools.ssh import Inventory, InventoryError, UnknownHostError

SEED_INVENTORY = """\
known_hosts: keys/known_hosts
defaults: {user: aurora, identity_file: ~/.ssh/id_ed25519, port: 22}
hosts:
  spark-a: {address: 10.1.230.180, roles: [head], labels: {rack: r1}}
  spark-b: {address: 192.168.200.13, jump: spark-a, roles: [worker], port: 2222, user: root}
"""


def write(tmp_path: Path, name: str, text: str) -> Path:
    path = tmp_path / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


def test_yaml_with_defaults_and_jump(tmp_path: Path) -> None:
    inventory = Inventory.load(write(tmp_path, "inventory.yaml", SEED_INVENTORY))

    head = inventory.get("spark-a")
    worker = inventory.get("spark-b")
    assert (head.address, head.port, head.user) == ("10.1.230.180", 22, "aurora")
    assert head.identity_file == Path("~/.ssh/id_ed25519").expanduser()
    assert head.labels == {"rack": "r1"} and head.jump is None
    assert (worker.address, worker.port, worker.user, worker.jump) == (
        "192.168.200.13",
        2222,
        "root",
        "spark-a",
    )
    assert inventory.names() == ["spark-a", "spark-b"]
    assert (head.roles, worker.roles) == (["head"], ["worker"])
    assert inventory.known_hosts_path == tmp_path / "keys" / "known_hosts"


def test_known_hosts_defaults_to_users_file() -> None:
    inventory = Inventory.from_dict({"hosts": {"h": {"address": "127.0.0.1", "user": "u"}}})
    assert inventory.known_hosts_path == Path("~/.ssh/known_hosts").expanduser()


def test_unknown_host_lists_known_names(tmp_path: Path) -> None:
    inventory = Inventory.load(write(tmp_path, "inventory.yaml", SEED_INVENTORY))
    with pytest.raises(UnknownHostError) as caught:
        inventory.get("spark-z")
    assert "spark-z" in str(caught.value)
    assert "spark-a, spark-b" in str(caught.value)


def test_ssh_alias_resolved_from_openssh_config(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("HOME", str(tmp_path))
    write(tmp_path, ".ssh/id_spark", "a key")
    write(
        tmp_path,
        "ssh_config",
        "Host bastion\n  Hostname 10.9.0.1\n  User ops\n\n"
        "Host myspark\n  Hostname 10.9.0.2\n  Port 2200\n  User bob\n"
        "  IdentityFile ~/.ssh/id_spark\n  ProxyJump ops@bastion:22\n",
    )
    inventory = Inventory.from_dict(
        {
            "ssh_config": "ssh_config",
            "defaults": {"user": "aurora"},
            "hosts": {"gate": {"ssh_alias": "bastion"}, "spark": {"ssh_alias": "myspark"}},
        },
        base_dir=tmp_path,
    )
    spark = inventory.get("spark")
    assert (spark.address, spark.port, spark.user) == ("10.9.0.2", 2200, "bob")
    assert spark.identity_file == Path("~/.ssh/id_spark").expanduser()
    assert spark.jump == "gate"
    assert inventory.get("gate").user == "ops"


def test_host_named_in_ssh_config_needs_no_address(tmp_path: Path) -> None:
    write(tmp_path, "cfg", "Host spark-a\n  Hostname 10.1.230.180\n")
    inventory = Inventory.from_dict(
        {"ssh_config": "cfg", "defaults": {"user": "aurora"}, "hosts": {"spark-a": {}}},
        base_dir=tmp_path,
    )
    assert inventory.get("spark-a").address == "10.1.230.180"


def test_inventory_entry_overrides_ssh_config(tmp_path: Path) -> None:
    write(tmp_path, "cfg", "Host box\n  Hostname 10.0.0.9\n  User fromconfig\n")
    inventory = Inventory.from_dict(
        {"ssh_config": "cfg", "hosts": {"b": {"ssh_alias": "box", "user": "explicit"}}},
        base_dir=tmp_path,
    )
    assert (inventory.get("b").address, inventory.get("b").user) == ("10.0.0.9", "explicit")


def test_proxyjump_to_host_outside_inventory_is_a_load_error(tmp_path: Path) -> None:
    write(tmp_path, "cfg", "Host box\n  Hostname 10.0.0.9\n  ProxyJump elsewhere\n")
    with pytest.raises(InventoryError, match=r"'elsewhere'.*not an inventory host"):
        Inventory.from_dict(
            {"ssh_config": "cfg", "hosts": {"b": {"ssh_alias": "box", "user": "u"}}},
            base_dir=tmp_path,
        )


def test_jump_to_unknown_host_is_a_load_error() -> None:
    with pytest.raises(InventoryError) as caught:
        Inventory.from_dict({"hosts": {"w": {"address": "10.0.0.2", "user": "u", "jump": "h"}}})
    assert "'w' jumps through unknown host 'h'" in str(caught.value)


def test_jump_cycle_is_a_load_error() -> None:
    data = {
        "hosts": {
            "a": {"address": "10.0.0.1", "user": "u", "jump": "b"},
            "b": {"address": "10.0.0.2", "user": "u", "jump": "c"},
            "c": {"address": "10.0.0.3", "user": "u", "jump": "a"},
        }
    }
    with pytest.raises(InventoryError, match=r"cycle \(a -> b -> c -> a\)"):
        Inventory.from_dict(data)


def test_host_without_address_is_explained() -> None:
    with pytest.raises(InventoryError, match="'lonely' has no address"):
        Inventory.from_dict({"hosts": {"lonely": {"user": "u"}}})


def test_misspelled_field_is_named(tmp_path: Path) -> None:
    path = write(tmp_path, "inv.yaml", "hosts:\n  a: {adress: 10.0.0.1}\n")
    with pytest.raises(InventoryError, match=r"hosts\.a\.adress"):
        Inventory.load(path)


def test_missing_file_and_bad_yaml(tmp_path: Path) -> None:
    with pytest.raises(InventoryError, match="cannot read inventory"):
        Inventory.load(tmp_path / "nope.yaml")
    with pytest.raises(InventoryError, match="not valid YAML"):
        Inventory.load(write(tmp_path, "bad.yaml", "hosts: [unclosed\n"))


def test_how_ssh_logs_in_applies_to_hosts_given_by_address(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """IdentityAgent (and IdentityFile where Scout names no key) from the config, matched on the
    address as `ssh ADDRESS` would match it; other settings of the config stay out. A missing
    IdentityFile is skipped, as ssh skips it."""
    monkeypatch.setenv("HOME", str(tmp_path))
    write(tmp_path, ".ssh/id_config", "a key")
    write(tmp_path, ".ssh/id_second", "another key")
    write(
        tmp_path,
        "cfg",
        "Host 10.0.0.1\n  IdentityAgent none\n  User fromconfig\n\n"
        "Host 10.0.0.*\n  IdentityAgent ~/agent.sock\n  IdentityFile ~/.ssh/id_config\n"
        "  IdentityFile ~/.ssh/id_missing\n  IdentityFile ~/.ssh/id_second\n",
    )
    inventory = Inventory.from_dict(
        {
            "ssh_config": "cfg",
            "defaults": {"user": "aurora"},
            "hosts": {
                "off": {"address": "10.0.0.1"},
                "keyed": {"address": "10.0.0.2", "identity_file": "/keys/mine"},
                "plain": {"address": "10.0.0.3"},
                "elsewhere": {"address": "10.9.9.9"},
            },
        },
        base_dir=tmp_path,
    )
    off, keyed, plain, elsewhere = (
        inventory.get(n) for n in ("off", "keyed", "plain", "elsewhere")
    )
    assert (off.identity_agent, off.user) == ("none", "aurora")
    assert off.identity_file == Path("~/.ssh/id_config").expanduser()
    assert keyed.identity_agent == "~/agent.sock"  # asyncssh expands it when it connects
    assert keyed.identity_file == Path("/keys/mine")
    assert plain.identity_files == [tmp_path / ".ssh/id_config", tmp_path / ".ssh/id_second"]
    assert keyed.identity_files == [Path("/keys/mine")]
    assert (elsewhere.identity_agent, elsewhere.identity_file) == (None, None)


def test_hosts_are_simulated_only_when_every_one_carries_the_simulators_label(tmp_path) -> None:
    labelled = SEED_INVENTORY.replace("labels: {rack: r1}", "labels: {simulator: seed-pair}")
    assert not Inventory.load(write(tmp_path, "a.yaml", SEED_INVENTORY)).simulated()
    assert not Inventory.load(write(tmp_path, "b.yaml", labelled)).simulated()  # one of two
    both = labelled.replace("user: root}", "user: root, labels: {simulator: seed-pair}}")
    assert Inventory.load(write(tmp_path, "c.yaml", both)).simulated()
