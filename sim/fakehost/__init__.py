"""The fake hardware tools of a simulated host, and the server and client that run them.

The tools run in forked children of the host's tool server (server.py), or in their client when
there is no server (client.py); either way in a process of their own with the caller's streams.
The server also starts the host's commands (children.py), inside the host's walls
(confinement.py, on landlock.py and seccomp.py).
This package imports only the standard library and nothing from `sim` itself, so that it can
run from the host's bin folder with `python -I -S`.
"""
