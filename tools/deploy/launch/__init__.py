"""Launching an engine: the commands a recipe becomes on each node.

Stands on the fabric stage only (see README.md here)."""
