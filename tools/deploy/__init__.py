"""Multi-node deployment: recipes that turn facts and choices into commands, and their checks.

Nothing here runs a mutating command: recipes, the fit check and preflight only compute; the
agent drives the steps through its gated tools, and `endpoint` only reads a served endpoint.
"""
