"""The world model: probed facts per host, the model's notes, findings, and how they are shown.

`model` keeps the facts (findings come from `tools/checks`) and is the WorldStore the tools
update with the typed facts they find (tools/world/store.py); `render` writes them for the model
and for people. Every change is recorded as a `world_update` event.
"""
