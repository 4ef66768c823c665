"""The gate where it was aimed at: what the kernel or the program resolves is judged, not the
words as written (issue 36, item 3). Each case was a read before this: a device reached
through a process's root, a file name spliced into a shell's code by find, find's own `{}`
over a tree that holds /dev, a request line or a method a URL does not show."""

from __future__ import annotations

import pytest

from agent.safety.shell.judge import judge_shell
from tools.risk.assessment import Risk


@pytest.mark.parametrize(
    "command",
    [
        "cat /proc/self/root/dev/watchdog",
        "head -c1 /proc/1/task/1/root/dev/cpu_dma_latency",
        "cat /proc/thread-self/root/proc/self/root/dev/mem",
        "cat /dev/../dev/watchdog",
        "cat /proc/1234/fd/3",
        "cat /proc/self/cwd/watchdog",
        "od -N4 /proc/1/map_files/7f00-7f01",
    ],
)
def test_a_device_reached_through_a_kernel_alias_is_judged_as_the_device(command: str) -> None:
    assert judge_shell(command).risk > Risk.READ_ONLY, command


@pytest.mark.parametrize(
    "command",
    [
        "find /tmp -name '*.txt' -exec sh -c 'cat {}' \\;",
        "find /srv -exec bash -c 'head -n1 \"{}\"' \\;",
        "find . -exec python3 -c 'print(open(\"{}\").read())' \\;",
        "find / -exec cat {} +",
        "find /dev -name watchdog -exec cat {} \\;",
        "find /proc/self/root/dev -exec head -c1 {} +",
    ],
)
def test_what_find_puts_in_place_of_braces_is_judged(command: str) -> None:
    assert judge_shell(command).risk > Risk.READ_ONLY, command


@pytest.mark.parametrize(
    "command",
    [
        "curl --request-target http://10.9.9.9:8265/api/jobs/ http://127.0.0.1:8000/",
        "curl --request-target '*' http://127.0.0.1:8000/",
        "curl -H 'X-HTTP-Method-Override: DELETE' http://127.0.0.1:8000/v1/models",
        "curl -H 'x-http-method: POST' http://127.0.0.1:8000/v1/models",
    ],
)
def test_a_request_is_judged_by_what_the_server_receives(command: str) -> None:
    assert judge_shell(command).risk > Risk.READ_ONLY, command


@pytest.mark.parametrize(
    "command",
    [
        "cat /proc/1/root/etc/hostname",
        "find /var/log -name '*.log' -exec tail -n1 {} \\;",
        "find /tmp -exec grep -l err {} +",
        "curl --request-target /health http://127.0.0.1:8000/",
        "curl -H 'Accept: application/json' http://127.0.0.1:8000/v1/models",
        "cat /dev/fd/0",
    ],
)
def test_the_same_reads_without_the_alias_stay_reads(command: str) -> None:
    assert judge_shell(command).risk == Risk.READ_ONLY, command
