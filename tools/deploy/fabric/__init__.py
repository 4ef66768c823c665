"""The fabric between nodes: which path each node talks over, addresses, and proving it.

The bottom stage: it imports no other (see README.md here)."""
