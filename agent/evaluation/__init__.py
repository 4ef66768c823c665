"""Scoring planners on simulated clusters (`scout eval`) and the chaos model that draws
whole sessions to check Scout's invariants."""
