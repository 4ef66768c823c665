"""Plan steps are compared exactly: no edit that can change what runs passes as the approved step.

Every form is generated: each approved action is mutated at every blank (one removed, one added,
a tab for a space, a line indented or dedented, a terminator given a trailing space), and no
mutation may be taken as the approved step. Only where bash reads blanks purely as separators
(one line without quotes, escapes, expansions or braces) may blank runs differ.
"""

from __future__ import annotations

import random
import shlex
from collections.abc import Iterator

import pytest

from agent.safety.shell.judge import judge_shell
from tests.support.no_hosts import no_hosts
from tools.plans.approval import StepApprovals
from tools.plans.plan import Plan, PlanStep, step_key
from tools.ssh_exec import SSHExec, SSHExecInput

# Approved actions where whitespace is part of what runs: here-doc bodies and terminators,
# Python inside quotes, multi-line quotes, parameter defaults, line continuations.
ACTIONS = [
    "python3 - <<'EOF'\nimport shutil\nif False:\n    shutil.rmtree('/data/old')\nprint('ok')\nEOF",
    "cat > /etc/scout.yaml <<EOF\nserver:\n  port: 8000\n  host: 0.0.0.0\nEOF\nsystemctl reload x",
    "python3 -c '\nimport os\nfor p in []:\n    os.remove(p)\n'",
    'bash -c "\nif [ -e /x ]; then\n  echo keep\nfi\n"',
    "cat <<-EOF > /tmp/run.sh\n\techo a\n\techo b\nEOF",
    "echo 'two  spaces' > /tmp/x",
    'echo "${NAME:-a  b}"',
    "docker run -d img \\\n  --port 8000",
    "printf '%s\\n' a  b",
]


def mutations(text: str) -> Iterator[str]:
    """Every one-edit change of the blanks and line layout of `text`."""
    for i, char in enumerate(text):
        if char in " \t\n":
            yield text[:i] + text[i + 1 :]
            yield text[:i] + " " + text[i:]
            if char != "\n":
                yield text[:i] + {" ": "\t", "\t": " "}[char] + text[i + 1 :]
    lines = text.split("\n")
    for n, line in enumerate(lines):
        for changed in (" " + line, line + " ", line.lstrip(), line[4:] if line[:4] == "    "
                        else "    " + line, line + "\t"):  # fmt: skip
            if changed != line:
                yield "\n".join([*lines[:n], changed, *lines[n + 1 :]])
    yield text + "\n"
    yield "\n" + text


def approvals(action: str) -> StepApprovals:
    step = PlanStep(title="t", hosts=["spark-a"], actions=[action], expected_downtime="none",
                    rollback="r", success_check="c")  # fmt: skip
    return StepApprovals(Plan(goal="g", steps=[step]))


def taken(action: str, command: str) -> bool:
    """Whether an ssh_exec of `command` is taken as the approved step, as the gate asks it:
    by what the tool declares it runs where."""
    call = SSHExec(no_hosts(), judge_shell).commands(SSHExecInput(host="spark-a", command=command))
    return approvals(action).take(call) is not None


@pytest.mark.parametrize("action", ACTIONS)
def test_the_exact_action_is_the_step(action):
    assert taken(action, action)


@pytest.mark.parametrize("action", ACTIONS)
def test_no_blank_or_layout_edit_passes_as_the_approved_step(action):
    changed = {m for m in mutations(action) if m != action}
    assert len(changed) > 10
    passed = [m for m in changed if taken(action, m)]
    assert passed == []


def plain_lines(seed: int) -> Iterator[str]:
    """Single lines without quotes or expansions: words, operators and blank runs."""
    rng = random.Random(seed)
    words = ["docker", "rm", "vllm_node", "ip", "link", "set", "up", "-f", "a=1", "x*", "#c"]
    operators = ["&&", "||", ";", "|", ">", "2>&1", "&"]
    for _ in range(300):
        parts = [rng.choice(words + operators) for _ in range(rng.randint(1, 7))]
        yield "".join(part + rng.choice([" ", "  ", "\t", " \t "]) for part in parts)


def bash_words(line: str) -> list[str]:
    lexer = shlex.shlex(line, posix=True, punctuation_chars=True)
    lexer.commenters = ""
    lexer.whitespace_split = True
    return list(lexer)


@pytest.mark.parametrize("seed", range(3))
def test_blank_runs_may_differ_only_where_bash_reads_them_as_separators(seed):
    for line in plain_lines(seed):
        tight = " ".join(line.split())
        assert step_key(line) == step_key(tight)
        assert bash_words(line) == bash_words(tight)
        assert taken(tight, line)


def test_a_dedent_out_of_an_if_is_another_program():
    approved = ACTIONS[0]
    dedented = approved.replace("    shutil.rmtree", "shutil.rmtree")
    assert step_key(dedented) != step_key(approved) and not taken(approved, dedented)
    spaced_terminator = approved.replace("\nEOF", "\nEOF ")
    assert not taken(approved, spaced_terminator)
