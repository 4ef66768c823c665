"""Chaos sessions on the simulator: the chaos model (agent/replay/chaos/) plays drawn stories in
lanes of their own clusters, and the invariants that must hold after each, whatever the model
did (tests/integration/test_chaos_sessions.py, bench/chaos.py)."""
