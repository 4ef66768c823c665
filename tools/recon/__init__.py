"""Recon: the read-only probe pack and the parsers that turn its output into typed facts."""
