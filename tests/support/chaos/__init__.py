"""The chaos model: whole sessions written by hypothesis, not by an engineer, and the invariants
that must hold after each whatever the model did (tests/integration/test_chaos_sessions.py,
bench/chaos.py)."""
