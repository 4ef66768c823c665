"""Telling a missing tool from real output, and error messages that show what was read."""

import pytest

from tools.recon.parsers import ParseError, is_tool_missing, parse_size_bytes, parse_uname_a


@pytest.mark.parametrize(
    ("text", "exit_status"),
    [
        ("bash: line 1: ibstat: command not found", 127),
        ("", 127),
        ("cat: /etc/dgx-release: No such file or directory", 1),
        ("grep: /proc/meminfo: Permission denied", 2),
        ("permission denied while trying to connect to the Docker daemon socket", 1),
        ("(nvcc not in PATH)", 0),
    ],
)
def test_tool_missing(text: str, exit_status: int) -> None:
    assert is_tool_missing(text, exit_status) is True


@pytest.mark.parametrize(
    ("text", "exit_status"),
    [("Linux hutch 6.17.0-1014-nvidia #14 aarch64 GNU/Linux", 0), ("Active FEC encoding: None", 0)],
)
def test_real_output_is_not_missing(text: str, exit_status: int) -> None:
    assert is_tool_missing(text, exit_status) is False


def test_parse_error_quotes_the_input_and_says_what_to_do() -> None:
    with pytest.raises(ParseError) as error:
        parse_uname_a("sudo: a password is required")
    message = str(error.value)
    assert "uname -a" in message
    assert "'sudo: a password is required'" in message
    assert "Check that the command ran" in message


def test_parse_error_on_empty_output() -> None:
    with pytest.raises(ParseError, match=r"\(empty output\)"):
        parse_uname_a("")


@pytest.mark.parametrize(
    ("text", "expected"),
    [("0B", 0), ("121Gi", 121 * 1024**3), ("3.7T", round(3.7 * 1024**4)), ("5.3Mi", 5557453),
     ("218.83GiB", round(218.83 * 1024**3)), ("4096", 4096), ("12K", 12288)],
)  # fmt: skip
def test_sizes(text: str, expected: int) -> None:
    assert parse_size_bytes(text) == expected


def test_size_rejects_words() -> None:
    with pytest.raises(ParseError, match="size"):
        parse_size_bytes("lots")
