"""Globs and patterns in reads: what bash expands is judged where it lands, what it does not is
only text (a quoted regex handed to grep is not a file name).

A command over ssh starts in the login's home; only after a `cd` to a folder known at run time
can an unquoted glob match device or kernel files, and only then does it ask.
"""

from __future__ import annotations

import itertools

import pytest

from agent.safety.shell import classify_command
from tools.risk.assessment import Risk

REGEXES = ("[0-9]+", "[0-9]+([.][0-9]+){3}", "^inet [0-9.]*", "a?b*", "[[:space:]]+x", "x{12}")
READERS = ("grep -E", "grep -oE", "grep -c", "egrep", "grep -E -e")
FILES = ("/proc/meminfo", "/etc/hosts", "log.txt", "")
QUOTES = ("'{}'", '"{}"')


def _quoted_regex_reads() -> list[str]:
    forms = []
    for reader, regex, path, quote in itertools.product(READERS, REGEXES, FILES, QUOTES):
        forms.append(f"{reader} {quote.format(regex)} {path}".strip())
        forms.append(f"ip -4 addr show | {reader} {quote.format(regex)}")
    return forms


@pytest.mark.parametrize("command", _quoted_regex_reads())
def test_a_quoted_pattern_is_text_not_a_file(command: str) -> None:
    assert classify_command(command).risk == Risk.READ_ONLY, command


UNKNOWN_FOLDERS = ("cd $X", "cd ..", "cd -", "cd $(cat dir.txt)", "pushd $D")
GLOBS = ("*", "k*", "watch?", "[a-z]*")
OPENERS = ("cat", "head -c 1", "grep x", "md5sum", "wc -l")


@pytest.mark.parametrize(
    "command",
    [
        f"{cd}{sep}{opener} {glob}"
        for cd, sep, opener, glob in itertools.product(
            UNKNOWN_FOLDERS, ("; ", " && "), OPENERS, GLOBS
        )
    ],
)
def test_a_glob_in_a_folder_known_only_at_run_time_asks(command: str) -> None:
    assert classify_command(command).risk != Risk.READ_ONLY, command


@pytest.mark.parametrize(
    "command", [f"{opener} {glob}" for opener, glob in itertools.product(OPENERS, GLOBS)]
)
def test_a_glob_in_the_home_folder_stays_a_read(command: str) -> None:
    assert classify_command(command).risk == Risk.READ_ONLY, command
