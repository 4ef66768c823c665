"""The shell reader: quoting, substitutions, lists, redirections, here-documents, bad input."""

from __future__ import annotations

import re

import pytest

from agent.safety.shell.shell_parse import RuntimeText, ShellSyntaxError, parse_script


def only_command(source: str):
    script = parse_script(source)
    assert len(script.commands) == 1, script.commands
    return script.commands[0]


@pytest.mark.parametrize(
    ("source", "argv"),
    [
        ("echo 'a b' \"c d\" e\\ f", ["echo", "a b", "c d", "e f"]),
        ("echo 'it''s'", ["echo", "its"]),
        ('echo "a\\"b\\$c\\\\d"', ["echo", 'a"b$c\\d']),
        ('echo "it\'s"', ["echo", "it's"]),
        ("echo $'a\\tb\\x41\\101\\''", ["echo", "a\tbAA'"]),
        ('echo $"x"', ["echo", "x"]),
        ("\\rm -rf /tmp/x", ["rm", "-rf", "/tmp/x"]),
        ("r''m x", ["rm", "x"]),
        ("echo a#b # a comment; rm -rf /", ["echo", "a#b"]),
        ("ls \\\n  -la", ["ls", "-la"]),
        ("echo 'rm -rf /; reboot'", ["echo", "rm -rf /; reboot"]),
        ("echo {a,b} ~/x *.log", ["echo", "a", "b", "~/x", "*.log"]),
        ("echo {'a',\"b\"}c {1..3}", ["echo", "ac", "bc", "1", "2", "3"]),
        ("echo '{a,b}' \\{a,b}", ["echo", "{a,b}", "{a,b}"]),
        ("echo 2 > x", ["echo", "2"]),
    ],
)
def test_quotes_are_removed_like_the_shell_does(source, argv):
    assert only_command(source).argv == argv


@pytest.mark.parametrize(
    ("source", "substitutions"),
    [
        ("ls $(rm -rf /)", ["rm -rf /"]),
        ("ls `rm -rf /`", ["rm -rf /"]),
        ('echo "today is $(date)"', ["date"]),
        ("echo $(echo $(reboot))", ["echo $(reboot)"]),
        ("echo $(echo ')')", ["echo ')'"]),
        ('echo "$(echo "a)b")"', ['echo "a)b"']),
        ("echo `echo \\`date\\``", ["echo `date`"]),
        ("diff <(ls a) <(ls b)", ["ls a", "ls b"]),
        ("tee >(grep x)", ["grep x"]),
        ("echo ${X:-$(reboot)}", ["reboot"]),
        ("echo $((1 + $(wc -l < f)))", ["wc -l < f"]),
        ("echo '$(not run)' \\$HOME \"\\$(nor this)\"", []),
        ("X=$(hostname) true", ["hostname"]),
        ("cat > $(mktemp)", ["mktemp"]),
    ],
)
def test_command_substitutions_are_found(source, substitutions):
    assert parse_script(source).commands[0].substitutions == substitutions


def test_expansions_are_marked_as_known_only_at_run_time():
    command = only_command("cp \"$HOME/a\" ${B} plain '$C'")
    values = command.argv
    assert [isinstance(v, RuntimeText) for v in values] == [False, True, True, False, False]
    assert values[1] == "$HOME/a"


@pytest.mark.parametrize(
    ("source", "names"),
    [
        ("a; b && c || d | e & f", ["a", "b", "c", "d", "e", "f"]),
        ("a\nb\n\nc", ["a", "b", "c"]),
        ("( a; b ) && { c; d; }", ["a", "b", "c", "d"]),
        ("if a; then b; elif c; then d; else e; fi", ["a", "b", "c", "d", "e"]),
        ("while a; do b; done; until c; do d; done", ["a", "b", "c", "d"]),
        ("for x in 1 2; do b $x; done", ["for", "b"]),
        ("! a |& b", ["a", "b"]),
        ("[[ -f a && -d b ]] && c", ["[[", "c"]),
        ("a &", ["a"]),
    ],
)
def test_lists_pipes_and_groups_are_split_into_simple_commands(source, names):
    assert [c.argv[0] for c in parse_script(source).commands] == names


def test_pipes_and_groups_are_remembered():
    first, second, third = parse_script("a | b; ( c )").commands
    assert (first.piped_input, second.piped_input, third.piped_input) == (False, True, False)
    assert (first.nested, third.nested) == (False, True)


def test_assignment_prefixes_are_not_the_command():
    command = only_command('A=1 B="x y" C+=z cmd arg=1')
    assert [w.assignment for w in command.assignments] == ["A", "B", "C"]
    assert command.argv == ["cmd", "arg=1"]


@pytest.mark.parametrize(
    ("source", "redirects"),
    [
        ("cmd > out", [(None, ">", "out")]),
        ("cmd 2>&1 >> log", [(2, ">&", "1"), (None, ">>", "log")]),
        ("cmd &> all >| forced", [(None, "&>", "all"), (None, ">|", "forced")]),
        ("cmd < in 3<> rw >&2", [(None, "<", "in"), (3, "<>", "rw"), (None, ">&", "2")]),
        ("cmd &>> log 2>/dev/null", [(None, "&>>", "log"), (2, ">", "/dev/null")]),
        ("cmd <<< 'some text'", [(None, "<<<", "some text")]),
        (">x", [(None, ">", "x")]),
    ],
)
def test_redirections(source, redirects):
    command = only_command(source)
    assert [(r.fd, r.op, r.target.text) for r in command.redirects] == redirects


def test_here_document_body_is_read_and_expanded_when_unquoted():
    script = parse_script("cat <<EOF > out\nhello $(whoami)\nEOF\nls")
    cat, ls = script.commands
    heredoc = cat.redirects[0]
    assert (heredoc.op, heredoc.body) == ("<<", "hello $(whoami)\n")
    assert cat.substitutions == ["whoami"]
    assert cat.redirects[1].target.text == "out"
    assert ls.argv == ["ls"]


def test_quoted_here_document_delimiter_turns_expansion_off():
    command = only_command("cat <<'EOF'\n$(reboot)\nEOF")
    assert command.redirects[0].body == "$(reboot)\n"
    assert command.substitutions == []


def test_dash_here_document_strips_leading_tabs():
    command = only_command("cat <<-END\n\tone\n\t\ttwo\n\tEND")
    assert command.redirects[0].body == "one\ntwo\n"


def test_two_here_documents_on_one_line():
    command = only_command("paste <<A <<B\n1\nA\n2\nB")
    assert [r.body for r in command.redirects] == ["1\n", "2\n"]


@pytest.mark.parametrize(
    ("source", "problem"),
    [
        ('echo "x', "unbalanced double quote"),
        ("echo 'x", "unbalanced single quote"),
        ("echo $'x", "unbalanced $'"),
        ("ls $(", "unbalanced parenthesis"),
        ("ls $(echo", "unbalanced parenthesis"),
        ("echo `x", "unbalanced backtick"),
        ("echo ${x", "unbalanced brace"),
        ("ls &&", "ends after an operator"),
        ("ls |", "ends after an operator"),
        ("| grep x", "with no command before it"),
        ("; ls", "with no command before it"),
        ("ls ;; x", "not supported"),
        ("ls )", "without a matching '('"),
        ("( ls", "never closed"),
        ("{ ls;", "never closed"),
        ("ls; }", "without a matching '{'"),
        ("case x in a) ls;; esac", "not supported"),
        ("f() { ls; }", "functions are not supported"),
        ("arr=(a b)", "functions are not supported"),
        ("cat <<", "here-document delimiter"),
        ("ls >", "not followed by a file name"),
        ("ls > | x", "not followed by a file name"),
        ("[[ -f x", "'[[' without its closing ']]'"),
    ],
)
def test_input_the_reader_cannot_follow_is_rejected_with_a_reason(source, problem):
    with pytest.raises(ShellSyntaxError, match=re.escape(problem)):
        parse_script(source)


@pytest.mark.parametrize("source", ["", "   ", "# just a comment", "\n\n"])
def test_empty_input_has_no_commands(source):
    assert parse_script(source).commands == ()
