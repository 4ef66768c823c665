"""The gate's classes, inverted to allow-lists (issue 25), each tested as the set of its forms.

Every generator in policy_forms*.py crosses a construct with its spellings and placements; a
state-changing form must never be read_only (the worst mistake the gate can make), and the
plain reads of each class must stay read_only so the gate stays usable.
"""

from __future__ import annotations

from collections.abc import Iterable

import pytest

from agent.safety.shell import classify_command
from agent.safety.shell.judge import inventory_judge, judge_shell
from tests.unit import policy_forms as shell
from tests.unit import policy_forms_programs as programs
from tools.risk.assessment import Risk

STATE_CHANGING = {
    "arithmetic": shell.arithmetic_forms,
    "indirection": shell.indirection_forms,
    "builtins": shell.builtin_forms,
    "assignments": shell.assigning_forms,
    "awk": programs.awk_forms,
    "sed": programs.sed_forms,
    "tmux": programs.tmux_forms,
    "find": programs.find_forms,
    "netns_exec": programs.netns_exec_forms,
    "git_config": programs.git_config_forms,
    "ssh_options": programs.ssh_option_forms,
    "nmcli": programs.nmcli_forms,
    "endpoints": programs.endpoint_forms,
    "serving": programs.serving_forms,
    "devices": programs.device_forms,
    "restarts": programs.restart_forms,
}
DESTRUCTIVE = ("netns_exec", "nmcli", "restarts")


def _wrong(forms: Iterable[str], wrong) -> list[str]:
    found = []
    for command in forms:
        verdict = classify_command(command)
        if wrong(verdict.risk):
            found.append(f"  {verdict.label}: {command!r} — {'; '.join(verdict.reasons)}")
    return found


@pytest.mark.parametrize("kind", STATE_CHANGING)
def test_no_form_of_a_state_changing_class_is_read_only(kind):
    forms = list(STATE_CHANGING[kind]())
    assert len(forms) >= 20, "the generator should cover its class"
    wrong = _wrong(forms, lambda risk: risk == Risk.READ_ONLY)
    assert not wrong, f"{len(wrong)} of {len(forms)} {kind} forms read_only:\n" + "\n".join(wrong)


@pytest.mark.parametrize("kind", DESTRUCTIVE)
def test_destructive_classes_stay_destructive(kind):
    wrong = _wrong(STATE_CHANGING[kind](), lambda risk: risk != Risk.DESTRUCTIVE)
    assert not wrong, "\n".join(wrong)


READ_CLASSES = {
    "literal arithmetic": shell.literal_arithmetic_forms,
    "awk reads": programs.awk_reads,
    "inert variables": lambda: (
        f"{form.format(n=name)} {read}"
        for form in ("{n}=C", "env {n}=C", "export {n}=C;")
        for name in shell.INERT_NAMES
        for read in shell.READS
    ),
    "read endpoints": lambda: (
        f"curl -s http://{host}:{port}{path}"
        for host in ("localhost", "127.0.0.1", "[::1]")
        for port in programs.SERVING
        for path in programs.READ_ENDPOINTS
    ),
}


@pytest.mark.parametrize("kind", READ_CLASSES)
def test_the_plain_reads_of_each_class_stay_read_only(kind):
    wrong = _wrong(READ_CLASSES[kind](), lambda risk: risk != Risk.READ_ONLY)
    assert not wrong, "\n".join(wrong)


ENCODED = ("rm -rf /tmp/x", "ls --zzz /tmp", "cat /dev/watchdog", "nvidia-smi -r", "ls -la /tmp",
           "systemctl restart docker", "kubectl delete pod x")  # fmt: skip


@pytest.mark.parametrize("pairs", [shell.ansi_c_pairs, shell.brace_pairs, shell.path_pairs])
def test_spellings_are_judged_as_the_words_bash_makes(pairs):
    """ANSI-C quoting, brace expansion with quoted members, and paths with `//`, `.`, `..`."""
    wrong = []
    for plain, written in pairs(ENCODED):
        expected, got = classify_command(plain).risk, classify_command(written).risk
        if got < expected:
            wrong.append(f"  {written!r}: {got.label}, but {plain!r} is {expected.label}")
    assert not wrong, "\n".join(wrong)


def test_an_unknown_option_asks_and_never_lowers_what_the_verb_does():
    for command, _option in programs.unknown_option_forms():
        verdict = classify_command(command)
        assert verdict.risk == Risk.DESTRUCTIVE, (command, verdict.reasons)
    for read in ("kubectl get pods", "systemctl status docker", "docker ps", "journalctl -b"):
        verdict = classify_command(f"{read} --zzz-{len(read)}")
        assert verdict.risk == Risk.MUTATING
        assert any(f"--zzz-{len(read)}" in reason for reason in verdict.reasons)


@pytest.mark.parametrize("form", [*programs.WRITING_READS, *programs.LOADING_READS])
def test_read_verbs_with_an_option_that_writes_or_loads_are_not_read_only(form):
    for target in ("/tmp/out", "out.txt", "/etc/x"):
        verdict = classify_command(form.format(f=target))
        assert verdict.risk >= Risk.MUTATING, (form, verdict.reasons)
        if target == "/etc/x" and form in programs.WRITING_READS:
            assert verdict.risk == Risk.DESTRUCTIVE, (form, verdict.reasons)


@pytest.mark.parametrize("name", [*shell.EXPORTED_NAMES])
def test_a_tool_calls_env_asks_for_every_name_off_the_inert_list_and_names_it(name):
    verdict = judge_shell("nvidia-smi -L", env={name: "/tmp/x"})
    assert verdict.risk == Risk.MUTATING and name in verdict.reason


@pytest.mark.parametrize("name", shell.INERT_NAMES)
def test_inert_names_in_a_tool_calls_env_stay_read_only(name):
    assert judge_shell("nvidia-smi -L", env={name: "C"}).risk == Risk.READ_ONLY


def test_the_inventory_judges_its_own_hosts_like_loopback_and_no_other():
    judge = inventory_judge(["spark-b", "192.168.200.13"])
    for host in ("spark-b", "192.168.200.13"):
        assert judge(f"curl -s http://{host}:8000/v1/models").risk == Risk.READ_ONLY
        assert judge(f"curl -s http://{host}:8265/api/actors/kill").risk == Risk.MUTATING
        assert judge(f"docker -H tcp://{host}:2375 ps").risk == Risk.READ_ONLY
    for command in programs.endpoint_forms():
        assert judge(command).risk > Risk.READ_ONLY, command
    assert classify_command("curl -s http://spark-b:8000/health").risk == Risk.MUTATING
