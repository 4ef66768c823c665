"""A local stand-in for the Anthropic Messages API (and vLLM's dialect of it) that answers
from a script: the real SDK talks to it in replays, the demo and the tests."""
