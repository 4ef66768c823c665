"""The system prompt and the playbooks, as Markdown files shipped as package data.

`agent.runtime.prompts` loads them by name with importlib.resources, so an installed Scout finds
them wherever pip put the package.
"""
