"""Planning a deployment: what to run where, why, and what must be true first.

The only stage that may import every other (see README.md here)."""
