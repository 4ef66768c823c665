"""The `scout` command as a user runs it: help, replay, policy, and clear errors."""

import argparse
import os
import subprocess
import sys
from argparse import ArgumentParser
from pathlib import Path

import pytest

from agent.faces.cli import build_parser

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[2]
SCOUT = str(Path(sys.executable).with_name("scout"))


def scout(*args: str, home: Path, extra_env: dict | None = None) -> subprocess.CompletedProcess:
    env = {**os.environ, "SCOUT_HOME": str(home), "NO_COLOR": "1", "COLUMNS": "100"}
    env.update(extra_env or {})
    return subprocess.run(
        [SCOUT, *args], capture_output=True, text=True, timeout=60, env=env, cwd=ROOT
    )


def test_help_lists_every_command(tmp_path):
    done = scout("--help", home=tmp_path)
    for command in ("replay", "chat", "run", "recon", "demo", "init", "doctor", "policy"):
        assert command in done.stdout
    for command in ("replay", "chat", "run", "recon", "demo", "init", "doctor"):
        assert scout(command, "--help", home=tmp_path).returncode == 0


def _subcommands(parser: argparse.ArgumentParser, prefix: str = "") -> dict[str, ArgumentParser]:
    found = {}
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                found[f"{prefix}{name}"] = sub
                found |= _subcommands(sub, f"{prefix}{name} ")
    return found


def test_every_subcommand_help_says_what_it_does(tmp_path):
    commands = _subcommands(build_parser())
    assert {"doctor", "policy", "policy classify", "recon", "demo"} <= commands.keys()
    for name, parser in commands.items():
        assert parser.description and len(parser.description) > 30, f"scout {name} --help"
    shown = scout("doctor", "--help", home=tmp_path).stdout
    assert "Check what Scout needs, without changing anything" in " ".join(shown.split())


def test_replay_of_the_sample_shows_the_batch_and_its_failures(tmp_path):
    done = scout("replay", "sample-batch", home=tmp_path)
    assert done.returncode == 0
    assert "Invalid input for echo; nothing was run" in done.stdout
    assert "disk /dev/nvme0n1 read-only" in done.stdout
    assert "timed out after 0.3 s" in done.stdout
    assert "session ended: done" in done.stdout


def test_replay_of_a_cut_transcript_warns_and_shows_the_rest(tmp_path):
    text = (ROOT / "transcripts" / "sample-batch.jsonl").read_text()
    cut = tmp_path / "cut.jsonl"
    cut.write_text(text[: len(text) - 40])
    done = scout("replay", str(cut), home=tmp_path)
    assert done.returncode == 0
    assert "last line is incomplete" in done.stderr
    assert "Invalid input for echo" in done.stdout
    assert "Traceback" not in done.stderr


def test_replay_of_a_missing_file_is_a_clear_error(tmp_path):
    done = scout("replay", "nope.jsonl", home=tmp_path)
    assert done.returncode == 1 and "no such transcript: nope.jsonl" in done.stderr


def test_policy_classify_says_what_and_why(tmp_path):
    done = scout("policy", "classify", "docker rm -f vllm_node", home=tmp_path)
    assert done.stdout.startswith("destructive")
    assert "'docker rm' removes a container" in done.stdout
    assert scout("policy", "classify", "nvidia-smi -L", home=tmp_path).stdout.startswith(
        "read_only"
    )


def test_chat_without_a_key_points_to_the_demo(tmp_path):
    done = scout("chat", home=tmp_path)
    assert done.returncode == 1 and "scout demo" in done.stderr


def test_a_bad_settings_file_is_explained(tmp_path):
    settings = tmp_path / "settings.yaml"
    settings.write_text("mode: yolo\n")
    done = scout("run", "--goal", "x", home=tmp_path, extra_env={"SCOUT_SETTINGS": str(settings)})
    assert done.returncode == 1 and "mode" in done.stderr and "Traceback" not in done.stderr
