"""The world model: probed facts per host, the model's notes, findings, and how they are shown.

`model` keeps the facts (findings come from `tools/checks`); `render` writes them for
the model and for people; `feed` refreshes the model from tool results.
"""
