"""The safety policy: how risky a shell command is, judged by parsing it rather than by patterns."""

from agent.safety.shell.classifier import Classification, classify_command

__all__ = ["Classification", "classify_command"]
