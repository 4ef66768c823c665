"""Driving chaos sessions from hypothesis in the tests: the lanes, the invariants and the model
itself are product (agent/evaluation/chaos/), shared with bench/chaos.py."""
