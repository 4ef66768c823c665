"""Driving chaos sessions from hypothesis in the tests: the lanes, the invariants and the model
itself are product (agent/replay/chaos/), shared with bench/chaos.py."""
