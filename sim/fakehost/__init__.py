"""The fake hardware tools of a simulated host.

They run as separate short-lived processes (`python -S -E`), so this package imports only the
standard library and nothing from `sim` itself: start-up stays at a few milliseconds.
"""
