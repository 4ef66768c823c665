"""N-host variants of a scenario: the head plus copies of its worker that differ like machines."""

from __future__ import annotations

import pytest

from sim.fleet import column_letters, fleet
from sim.scenario import ScenarioError, load_scenario


def test_names_continue_the_heads_letter_like_spreadsheet_columns() -> None:
    assert [column_letters(i) for i in (0, 1, 25, 26, 31)] == ["a", "b", "z", "aa", "af"]
    names = list(fleet(load_scenario("seed-pair"), 32).hosts)
    assert names[:3] == ["spark-a", "spark-b", "spark-c"] and names[-1] == "spark-af"


def test_copies_differ_only_where_two_machines_must() -> None:
    seed = load_scenario("seed-pair")
    hosts = fleet(seed, 32).hosts
    workers = [h for name, h in hosts.items() if name != "spark-a"]
    assert hosts["spark-a"] == seed.hosts["spark-a"] and workers[0] == seed.hosts["spark-b"]
    for key in (
        lambda h: h.address,
        lambda h: h.hostname,
        lambda h: h.gpu.uuid,
        lambda h: h.nics["enp1s0f1np1"].mac,
        lambda h: h.nics["enp1s0f1np1"].addresses[0],
    ):
        assert len({key(h) for h in hosts.values()}) == 32
    last = workers[-1]
    assert last.address == "192.168.200.43" and last.hostname == "spark-b50a"
    assert last.nics["enp1s0f1np1"].addresses == ["192.168.100.41/24"]
    assert last.nics["docker0"].addresses == ["172.17.0.1/16"]  # a bridge is the same everywhere
    assert last.nics["enp1s0f1np1"].up is False  # the seed worker's link is down on every copy
    assert all(h.role == "worker" and h.port == 22 for h in workers)


def test_fleet_size_is_checked() -> None:
    with pytest.raises(ScenarioError, match="2 to 200 hosts"):
        fleet(load_scenario("seed-pair"), 1)
