"""Every way a user can point `scout` at something wrong: one clear line and an exit code, never a
traceback. One table: each row is a command line, the exit status and what stderr must say."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import asyncssh
import pytest

from tests.support.closed_port import held_closed_port

pytestmark = pytest.mark.slow

SCOUT = str(Path(sys.executable).with_name("scout"))


@dataclass(frozen=True)
class Case:
    argv: str  # `{d}` is the folder of the prepared files
    code: int
    says: tuple[str, ...]
    env: dict[str, str] = field(default_factory=dict)


INVENTORY_COMMANDS = {
    "chat": ("chat --inventory {inv}", 1),
    "run": ("run --goal x --inventory {inv}", 1),
    "recon": ("recon --inventory {inv}", 2),
    "doctor": ("doctor --inventory {inv}", 1),
}
BAD_INVENTORIES = {
    "missing": ("/nope.yaml", ("cannot read inventory /nope.yaml", "No such file")),
    "yaml-syntax": (
        "{d}/broken.yaml",
        ("{d}/broken.yaml is not valid YAML: line 3, column 1: expected ',' or '}'",),
    ),
    "unknown-jump": ("{d}/jump.yaml", ("jumps through unknown host 'zz'; known hosts: a",)),
    "latin-1": (
        "{d}/latin1.yaml",
        ("line 2, column 6: byte 0xe9 is not UTF-8 text",),
    ),
    "stray-0xff": ("{d}/ff.yaml", ("line 3, column 1: byte 0xff is not UTF-8 text",)),
    "utf-16-without-mark": ("{d}/utf16-nomark.yaml", ("a NUL byte is not text",)),
    "port-out-of-range": ("{d}/port.yaml", ("hosts.a.port: Input should be less than or equal",)),
    "no-hosts": ("{d}/empty.yaml", ("lists no hosts; add one under `hosts:`",)),
    "identity-file-is-a-folder": ("{d}/keydir.yaml", ("name the private key file in it",)),
}
CASES: dict[str, Case] = {
    f"{command}-{bad}": Case(argv.replace("{inv}", path), code, says)
    for command, (argv, code) in INVENTORY_COMMANDS.items()
    for bad, (path, says) in BAD_INVENTORIES.items()
}
CASES |= {
    "init-dir-is-a-file": Case("init --dir {d}/afile", 1, ("--dir {d}/afile is a file",)),
    "init-dir-cannot-be-made": Case(
        "init --dir /proc/scout-nope", 1, ("cannot use --dir /proc/scout-nope",)
    ),
    "home-under-a-file": Case(
        "demo --fast",
        1,
        ("cannot use the log folder {d}/afile/home/logs", "not a directory"),
        {"SCOUT_HOME": "{d}/afile/home"},
    ),
    "home-unwritable": Case(
        "chat",
        1,
        ("cannot use the log folder /proc/scout-nope/logs",),
        {"SCOUT_HOME": "/proc/scout-nope"},
    ),
    "transcripts-unwritable": Case(
        "demo --fast",
        1,
        ("cannot use the transcripts folder /proc/scout-nope",),
        {"SCOUT_TRANSCRIPTS_DIR": "/proc/scout-nope"},
    ),
    "recon-without-inventory": Case("recon", 2, ("no inventory: pass --inventory FILE",)),
    "recon-host-unreachable": Case(
        "recon --inventory {d}/closed.yaml", 1, ("scout recon: a unreachable", "cannot reach a")
    ),
    "doctor-host-unreachable": Case(
        "doctor --inventory {d}/closed.yaml", 1, ("FAIL cannot reach a", "sshd runs")
    ),
    "settings-invalid-value": Case(
        "run --goal x", 1, ("mode",), {"SCOUT_SETTINGS": "{d}/yolo.yaml"}
    ),
    "settings-yaml-syntax": Case(
        "doctor",
        1,
        ("{d}/broken.yaml is not valid YAML: line 3, column 1",),
        {"SCOUT_SETTINGS": "{d}/broken.yaml"},
    ),
    "replay-missing": Case("replay nope.jsonl", 1, ("no such transcript: nope.jsonl",)),
    "replay-unknown-scenario": Case(
        "replay sample-batch --sim nope", 1, ("unknown scenario 'nope'; choose one of",)
    ),
    "demo-missing-transcript": Case("demo --transcript nope", 1, ("no such transcript: nope",)),
    "chat-resume-missing": Case("chat --resume {d}/gone.jsonl", 1, ("no such transcript",)),
    "run-resume-empty": Case(
        "run --resume {d}/empty.jsonl", 1, ("cannot resume: {d}/empty.jsonl is empty",)
    ),
    "run-resume-binary": Case(
        "run --resume /bin/true", 1, ("cannot resume: /bin/true is not a Scout transcript",)
    ),
    "run-resume-foreign": Case(
        "run --resume {d}/foreign.jsonl",
        1,
        ("cannot resume: {d}/foreign.jsonl is not a Scout transcript: no line of it is a",),
    ),
    "chat-resume-foreign": Case(
        "chat --resume {d}/foreign.jsonl", 1, ("{d}/foreign.jsonl is not a Scout transcript",)
    ),
    "replay-foreign": Case(
        "replay {d}/foreign.jsonl", 1, ("{d}/foreign.jsonl is not a Scout transcript",)
    ),
    "run-dead-endpoint": Case(
        "run --goal x --base-url http://127.0.0.1:{closed}",
        1,
        (
            "scout run: error: Could not reach the model API at http://127.0.0.1:{closed} "
            "(connection refused), even after retries; check the network or ANTHROPIC_BASE_URL, "
            "then try again; transcript: ",
        ),
    ),
    "chat-without-key": Case("chat", 1, ("no API key",), {"ANTHROPIC_API_KEY": ""}),
    "run-base-url-with-v1": Case(
        "run --goal x --base-url http://10.0.0.5:8000/v1",
        1,
        ("base_url", "give the server's root, 'http://10.0.0.5:8000'"),
    ),
    "chat-base-url-no-scheme": Case(
        "chat --base-url 10.0.0.5:8000", 1, ("base_url", "is not an http(s) URL")
    ),
    "demo-unknown-scenario": Case("demo --fast --sim nope", 1, ("unknown scenario 'nope'",)),
    "policy-classify-binary-file": Case(
        "policy classify --file /bin/true", 2, ("/bin/true is not UTF-8 text",)
    ),
    "policy-classify-5-mb-line": Case(
        "policy classify --file {d}/5mb.txt",
        2,
        ("line 2 of {d}/5mb.txt is 5.0 MiB, longer than a command line can be (128 KiB",),
    ),
    "recon-utf-16-with-mark-is-read": Case(
        "recon --inventory {d}/closed-utf16.yaml", 1, ("scout recon: a unreachable",)
    ),
}
SETTINGS_COMMANDS = {
    "recon": ("recon --inventory {d}/closed.yaml", 2),
    "doctor": ("doctor", 1),
    "chat": ("chat", 1),
    "run": ("run --goal x", 1),
    "demo": ("demo --fast", 1),
    "redact": ("redact", 1),
}
BAD_SETTINGS = {
    "settings-latin-1": (
        {"SCOUT_SETTINGS": "{d}/settings-latin1.yaml"},
        ("settings-latin1.yaml is not valid YAML: line 1, column 16: byte 0xe9 is not UTF-8",),
    ),
    "rules-not-json": (
        {"SCOUT_RULES": "not json"},
        ("SCOUT_RULES is not valid JSON", "written as JSON"),
    ),
}
CASES |= {
    f"{command}-{bad}": Case(argv, code, says, env)
    for command, (argv, code) in SETTINGS_COMMANDS.items()
    for bad, (env, says) in BAD_SETTINGS.items()
}


@pytest.fixture(scope="module")
def files(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    with held_closed_port() as port:  # refuses connections while the module's tests run
        yield _prepared(tmp_path_factory.mktemp("bad-inputs"), port)


def _prepared(folder: Path, port: int) -> Path:
    """The bad inputs the cases name, in `folder`; `port` is one nothing listens on."""
    (folder / "broken.yaml").write_text("hosts:\n  a: {address: 10.0.0.1\n")
    (folder / "jump.yaml").write_text("hosts:\n  a: {address: 10.0.0.1, jump: zz}\n")
    (folder / "yolo.yaml").write_text("mode: yolo\n")
    (folder / "afile").write_text("not a folder\n")
    key = folder / "id_ed25519"
    asyncssh.generate_private_key("ssh-ed25519").write_private_key(str(key))
    closed = (
        f"known_hosts: {folder}/known_hosts\n"
        f"hosts:\n  a: {{address: 127.0.0.1, port: {port}, identity_file: {key}}}\n"
    )
    (folder / "closed.yaml").write_text(closed)
    (folder / "closed-port").write_text(str(port))
    (folder / "closed-utf16.yaml").write_text(closed, encoding="utf-16")  # as PowerShell writes
    (folder / "latin1.yaml").write_text("hosts:\n  café: {address: 10.0.0.1}\n", "latin-1")
    (folder / "ff.yaml").write_bytes(b"hosts:\n  a: {address: 10.0.0.1}\n\xff\n")
    (folder / "utf16-nomark.yaml").write_text("hosts:\n  a: {address: 10.0.0.1}\n", "utf-16-le")
    (folder / "port.yaml").write_text("hosts:\n  a: {address: 10.0.0.1, port: 70000}\n")
    (folder / "empty.yaml").write_text("hosts: {}\n")
    (folder / "keydir.yaml").write_text(
        f"hosts:\n  a: {{address: 10.0.0.1, identity_file: {folder}}}\n"
    )
    (folder / "empty.jsonl").write_text("")
    (folder / "5mb.txt").write_text("ls\necho " + "a" * 5 * 1024 * 1024 + "\n")
    (folder / "foreign.jsonl").write_text('{"level": "info", "msg": "another program"}\n' * 3)
    (folder / "settings-latin1.yaml").write_text("mode: ask # café\n", "latin-1")
    return folder


def _in(folder: Path, text: str) -> str:
    """`text` with `{d}` the prepared folder and `{closed}` a port nothing listens on."""
    closed = (folder / "closed-port").read_text()
    return text.replace("{d}", str(folder)).replace("{closed}", closed)


@pytest.mark.parametrize("case", CASES.values(), ids=CASES.keys())
def test_every_cli_error_is_one_clear_line(case: Case, files: Path, tmp_path: Path) -> None:
    env = {
        **os.environ,
        "SCOUT_HOME": str(tmp_path / "home"),
        "ANTHROPIC_API_KEY": "sk-ant-test-not-used",
        "NO_COLOR": "1",
        "COLUMNS": "200",
    }
    env.pop("SCOUT_SETTINGS", None)
    env.update({name: _in(files, value) for name, value in case.env.items()})
    done = subprocess.run(
        [SCOUT, *_in(files, case.argv).split()],
        capture_output=True,
        text=True,
        timeout=90,
        env=env,
        cwd=tmp_path,
        stdin=subprocess.DEVNULL,
    )
    shown = done.stdout + done.stderr
    assert done.returncode == case.code, shown
    for text in case.says:
        assert _in(files, text) in shown, shown
    assert "Traceback" not in shown and "<unicode string>" not in shown
    assert "[warning" not in shown and "[info" not in shown  # logs go to the log file only
