"""The shell risk classifier: how risky a command is, judged by parsing it with each program's
own option grammar rather than by patterns; `judge.judge_shell` adds the call's env and cwd.

Everything here is an allow-list: a command is read-only only when every part of it is
understood (the words bash makes, each program's options and verbs, inner languages such as
awk's, the variables it sets, where its reads go); anything unknown raises the label and the
reason names it."""

from agent.safety.shell.classifier import Classification, classify_command

__all__ = ["Classification", "classify_command"]
