"""`scout recon` is parsed by recon's parser alone (cli.parser_for, agent/faces/recon_command.py)
and reads exactly as the whole command tree reads it: the same values, the same help, the same
errors, so building less before the hosts are asked changes nothing a user sees."""

from __future__ import annotations

import argparse
import contextlib
import io

import pytest

from agent.faces.cli import build_parser, parser_for

ARGVS = (
    ["recon"],
    ["recon", "--inventory", "inv.yaml", "--hosts", "a,b", "--json"],
    ["recon", "--model-size-gb", "119", "--trust-new-hosts"],
    ["recon", "--help"],
    ["recon", "--model-size-gb", "lots"],
    ["recon", "--bogus"],
    ["recon", "extra"],
)


def _parsed(parser: argparse.ArgumentParser, argv: list[str]) -> tuple[object, str, str]:
    """What parsing `argv` gives: the values (no handler) or the exit status, and the output."""
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            values = vars(parser.parse_args(argv))
            result: object = {name: v for name, v in values.items() if name != "func"}
        except SystemExit as exc:
            result = ("exit", exc.code)
    return result, out.getvalue(), err.getvalue()


@pytest.mark.parametrize("argv", ARGVS, ids=" ".join)
def test_recon_alone_reads_as_the_whole_tree(argv: list[str]) -> None:
    assert _parsed(parser_for(argv), argv) == _parsed(build_parser(), argv)


def test_other_commands_get_the_whole_tree() -> None:
    commands = parser_for(["doctor"])._subparsers._group_actions[0].choices  # type: ignore[union-attr]
    assert {"recon", "doctor", "policy", "mcp"} <= set(commands)
    alone = parser_for(["recon"])._subparsers._group_actions[0].choices  # type: ignore[union-attr]
    assert set(alone) == {"recon"}
