"""The chaos model: a planner nobody wrote, whole sessions drawn by hypothesis (an optional
dependency: `pip install 'scout-agent[chaos]'`). `moves` says what it may do, `planner` plays a
drawn story as a ModelClient, `draw` walks a fixed seed, `harness` plays stories in lanes of
their own simulated clusters, and `invariants` says what must hold after each, whatever the
model did. tests/integration/test_chaos_sessions.py and bench/chaos.py check them over
thousands; `scout eval --planner chaos` scores it on the evaluation's scenarios."""
