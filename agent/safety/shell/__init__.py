"""The shell risk classifier: how risky a command is, judged by parsing it with each program's
own option grammar rather than by patterns; `judge.judge_shell` adds the call's env and cwd."""

from agent.safety.shell.classifier import Classification, classify_command

__all__ = ["Classification", "classify_command"]
