"""The world model: probed facts per host, the model's notes, findings, and how they are shown.

`model` keeps the facts; `findings` says what they mean across hosts; `render` writes them for
the model and for people; `feed` refreshes the model from tool results.
"""
