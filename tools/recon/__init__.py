"""Recon: the read-only probe pack, the parsers that turn its output into typed facts, and the
`recon` tool (`tool`) that applies a probe round to the world model."""
