"""A key given twice in any YAML file Scout reads is an error naming the key and both lines.

PyYAML keeps the last of two equal keys silently: a second `rules:` block dropped the first
one's deny rules (and the denied command ran), a host listed twice lost its first entry while
`scout doctor` said ok. Every reader goes through `tools.text.yaml_files.load_yaml`.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from agent.faces.cli import main
from agent.runtime.settings import SettingsError, load_settings
from tests.support.example_receiver import receiver
from tools.deploy.recipe_book.load import RecipeError, parse_recipe
from tools.ssh import Inventory
from tools.ssh.errors import InventoryError
from tools.text.yaml_files import DuplicateKeyError, load_yaml, load_yaml_as_pyyaml

ROOT = Path(__file__).resolve().parents[2]

TWO_RULES_BLOCKS = """\
rules:
  deny:
    - ssh_exec(command="rm *")
mode: auto-safe
rules:
  allow:
    - ssh_exec(command="ls *")
"""


@pytest.mark.parametrize(
    ("text", "key", "path", "lines"),
    [
        ("a: 1\nb: 2\na: 3\n", "a", (), (1, 3)),
        ("rules:\n  deny: [x]\n  ask: [y]\n  deny: [z]\n", "deny", ("rules",), (2, 4)),
        ("hosts:\n  a:\n    address: x\n    address: y\n", "address", ("hosts", "a"), (3, 4)),
        ("steps:\n  - name: a\n    name: b\n", "name", ("steps", "[0]"), (2, 3)),
        ("flags: {x: 1, x: 2}\n", "x", ("flags",), (1, 1)),
        ("yes: 1\ntrue: 2\n", True, (), (1, 2)),  # one key to YAML 1.1, as the dict holds it
        # a null key is a key like any other: `~`, `null` and `Null` are one key
        ("~: 1\nnull: 2\n", None, (), (1, 2)),
        ("models:\n  null: a\n  Null: b\n", None, ("models",), (2, 3)),
    ],
)
def test_a_key_given_twice_at_any_depth_names_the_key_and_both_lines(text, key, path, lines):
    with pytest.raises(DuplicateKeyError) as raised:
        load_yaml(text)
    assert (raised.value.key, raised.value.path, raised.value.lines) == (key, path, lines)
    assert f"appears twice (lines {lines[0]} and {lines[1]})" in str(raised.value)


def test_a_merge_key_may_be_overridden_and_equal_keys_in_two_mappings_are_fine():
    text = "base: &b {port: 1, user: u}\nhost:\n  <<: *b\n  port: 2\nother: {port: 1}\n"
    assert load_yaml(text) == {
        "base": {"port": 1, "user": "u"},
        "host": {"port": 2, "user": "u"},
        "other": {"port": 1},
    }


def test_a_second_rules_block_in_the_settings_file_is_refused(tmp_path, monkeypatch):
    path = tmp_path / "settings.yaml"
    path.write_text(TWO_RULES_BLOCKS)
    monkeypatch.setenv("SCOUT_SETTINGS", str(path))
    with pytest.raises(SettingsError) as raised:
        load_settings()
    assert str(raised.value) == (
        f"{path} is not valid YAML: key 'rules' appears twice (lines 1 and 5)"
    )


def test_policy_check_refuses_such_a_settings_file_in_one_line(tmp_path, monkeypatch, capsys):
    """The denied command no longer passes because the deny block was dropped."""
    path = tmp_path / "settings.yaml"
    path.write_text(TWO_RULES_BLOCKS)
    monkeypatch.setenv("SCOUT_SETTINGS", str(path))
    call = '{"tool": "ssh_exec", "input": {"host": "spark-a", "command": "rm -rf /srv/x"}}'
    assert main(["policy", "check", "--call", call]) != 0
    captured = capsys.readouterr()
    assert captured.out == ""
    assert captured.err.strip().splitlines() == [
        f"scout: {path} is not valid YAML: key 'rules' appears twice (lines 1 and 5)"
    ]


def test_a_host_listed_twice_in_the_inventory_is_refused(tmp_path):
    path = tmp_path / "inventory.yaml"
    path.write_text(
        "defaults: {user: u}\nhosts:\n  spark-a: {address: 10.0.0.1}\n"
        "  spark-b: {address: 10.0.0.2}\n  spark-a: {address: 10.0.0.3}\n"
    )
    with pytest.raises(InventoryError) as raised:
        Inventory.load(path)
    assert str(raised.value).endswith("key 'spark-a' in hosts appears twice (lines 3 and 5)")


def test_doctor_fails_the_inventory_that_lists_a_host_twice(tmp_path, monkeypatch, capsys):
    inventory = tmp_path / "inventory.yaml"
    inventory.write_text(
        "defaults: {user: u}\nhosts:\n  spark-a: {address: 127.0.0.1}\n"
        "  spark-a: {address: 127.0.0.2}\n"
    )
    settings = tmp_path / "settings.yaml"
    settings.write_text(f"inventory: {inventory}\n")
    monkeypatch.setenv("SCOUT_SETTINGS", str(settings))
    monkeypatch.setenv("COLUMNS", "400")
    assert main(["doctor"]) == 1
    out = " ".join(capsys.readouterr().out.split())
    assert "key 'spark-a' in hosts appears twice (lines 3 and 4)" in out


def test_a_recipe_with_a_key_twice_is_refused_naming_the_file():
    text = "name: a\nengine: vllm\nname: b\n"
    with pytest.raises(RecipeError) as raised:
        parse_recipe(text, "op.yaml")
    assert str(raised.value) == "op.yaml: key 'name' appears twice (lines 1 and 3)"


def test_a_community_recipe_with_a_key_twice_reads_as_its_runner_reads_it_and_says_so():
    """spark-vllm-docker's run-recipe.py reads its files with yaml.safe_load, which keeps the
    last value; a real recipe at 358bf26 (nemotron-3-super-nvfp4) names `container` twice."""
    text = (
        "recipe_version: '1'\nname: n\ncontainer: vllm-node\n"
        "command: vllm serve org/model --port {port}\ndefaults: {port: 8000}\n"
        "container: nvcr.io/nvidia/vllm:26.05-py3\n"
    )
    recipe = parse_recipe(text, "community.yaml")
    assert recipe.image.ref == "nvcr.io/nvidia/vllm:26.05-py3"
    assert recipe.not_applied[0] == (
        "key 'container' appears twice (lines 3 and 6): spark-vllm-docker's run-recipe.py "
        "keeps the last value, and so does Scout"
    )
    data, duplicates = load_yaml_as_pyyaml("a: 1\nb: {c: 1, c: 2}\na: 3\n")
    assert data == {"a": 3, "b": {"c": 2}}
    assert [str(d) for d in duplicates] == [
        "key 'c' in b appears twice (lines 2 and 2)",
        "key 'a' appears twice (lines 1 and 3)",
    ]


def test_the_example_receivers_rules_file_refuses_a_second_deny_block(tmp_path):
    """It stands alone (copied into other services), so it checks keys itself, PyYAML's way."""
    path = tmp_path / "rules.yaml"
    path.write_text("deny:\n  - {risk: destructive}\napprove:\n  - {tool: '*'}\ndeny: []\n")
    with pytest.raises(ValueError) as raised:
        receiver.RulesDecider.from_file(path)
    assert str(raised.value) == f"{path}: key 'deny' appears twice (lines 1 and 5)"
    path.write_text("approve:\n  - {tool: ssh_exec, risk: read_only, risk: destructive}\n")
    with pytest.raises(ValueError, match=r"key 'risk' appears twice \(lines 2 and 2\)"):
        receiver.RulesDecider.from_file(path)


def test_every_yaml_reader_in_agent_and_tools_is_the_one_loader():
    """A new reader that calls PyYAML itself would take back the silent last-key-wins."""
    reader = ROOT / "tools" / "text" / "yaml_files.py"
    call = re.compile(r"\byaml\.(safe_load|load|full_load|unsafe_load|compose)\w*\(")
    offenders = [
        str(path.relative_to(ROOT))
        for folder in ("agent", "tools")
        for path in sorted((ROOT / folder).rglob("*.py"))
        if path != reader and call.search(path.read_text(encoding="utf-8"))
    ]
    assert offenders == []
