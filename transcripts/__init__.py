"""Recorded sessions shipped as package data: the demo's story and the README's sample batch.

`agent.replay.recordings` finds them by name (`scout replay seed-pair-deploy`), so an installed
Scout can replay them from any folder.
"""
