"""Running an approved plan's steps in order, and the session state that outlives a call.

It runs what launch and fabric built (see README.md here)."""
