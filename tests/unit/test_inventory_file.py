"""The inventory file's shape, checked by hand: the same problems the models named, each as a
`where: what` line, all at once; stricter than pydantic's lax guesses, never looser."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from tools.ssh import Inventory, InventoryError
from tools.ssh.inventory_file import InventoryShapeError, port_number, read_inventory_file


def problems(data: object) -> list[str]:
    with pytest.raises(InventoryShapeError) as caught:
        read_inventory_file(data)
    return caught.value.problems


def test_a_valid_file_is_typed() -> None:
    read = read_inventory_file(
        {
            "known_hosts": "kh",
            "defaults": {"user": "u", "port": "2222"},
            "hosts": {"a": {"address": "10.0.0.1", "roles": ["head"], "labels": {"r": "1"}}},
        }
    )
    assert read.known_hosts == Path("kh")
    assert read.defaults.port == 2222
    assert read.hosts["a"].roles == ["head"]
    assert read.hosts["a"].labels == {"r": "1"}


def test_every_problem_is_named_at_once() -> None:
    said = problems(
        {
            "known_hosts": 3,
            "defaults": {"port": 70000, "colour": "red"},
            "hosts": {
                "a": {"adress": "x", "port": 0, "roles": "head"},
                "b": None,
                7: {"address": "y"},
                "c": {"address": 5, "labels": {"rack": 1}, "user": ["u"]},
            },
        }
    )
    assert sorted(said) == sorted(
        [
            "known_hosts: Input is not a valid path",
            "defaults.colour: Extra inputs are not permitted",
            "defaults.port: Input should be less than or equal to 65535",
            "hosts.a.adress: Extra inputs are not permitted",
            "hosts.a.port: Input should be greater than or equal to 1",
            "hosts.a.roles: Input should be a valid list",
            "hosts.b: Input should be a valid dictionary",
            "hosts.7.[key]: Input should be a valid string",
            "hosts.c.address: Input should be a valid string",
            "hosts.c.labels.rack: Input should be a valid string",
            "hosts.c.user: Input should be a valid string",
        ]
    )


@pytest.mark.parametrize(
    ("data", "said"),
    [
        ({}, ["hosts: Field required"]),
        ({"hosts": None}, ["hosts: Input should be a valid dictionary"]),
        (["a"], ["(input): Input should be a valid dictionary"]),
    ],
)
def test_the_file_itself(data: object, said: list[str]) -> None:
    assert problems(data) == said


@pytest.mark.parametrize(
    ("value", "read"),
    [
        (22, 22),
        (" 2222 ", 2222),
        (22.0, 22),
        (True, "Input should be a valid integer"),  # pydantic read it as port 1
        ("22_0", "Input should be a valid integer, unable to parse string as an integer"),
        ("0x16", "Input should be a valid integer, unable to parse string as an integer"),
        (22.5, "Input should be a valid integer, got a number with a fractional part"),
        (65536, "Input should be less than or equal to 65535"),
        ([22], "Input should be a valid integer"),
    ],
)
def test_port_numbers(value: object, read: int | str) -> None:
    assert port_number(value) == read


def test_a_port_from_the_ssh_config_is_checked_too(tmp_path: Path) -> None:
    config = tmp_path / "ssh_config"
    config.write_text("Host far\n  Hostname 10.0.0.9\n  Port 70000\n")
    with pytest.raises(InventoryError) as caught:
        Inventory.from_dict({"ssh_config": str(config), "hosts": {"far": {}}})
    assert str(caught.value) == (
        "inventory: host 'far' is not valid: port: Input should be less than or equal to 65535"
    )


def test_reading_an_inventory_imports_no_pydantic(tmp_path: Path) -> None:
    inventory = tmp_path / "inventory.yaml"
    inventory.write_text("hosts:\n  a: {address: 10.0.0.1, port: 2222}\n")
    code = (
        "import sys\nfrom tools.ssh import Inventory\n"
        f"print(Inventory.load({str(inventory)!r}).get('a').endpoint, 'pydantic' in sys.modules)"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.split() == ["10.0.0.1:2222", "False"]
