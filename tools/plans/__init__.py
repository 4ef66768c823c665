"""A plan as data and its hash (`plan`), and the session's plan with its approval record: the
steps approved with it, each used once (`approval`), read by the gate, the rollout and resume.
"""
