"""Proving a served model: health, checked generations, the benchmark, the fingerprint.

It reads the rollout's state (see README.md here)."""
