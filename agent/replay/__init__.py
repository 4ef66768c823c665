"""Recordings: a local Messages-API server the real SDK talks to (`server` over HTTP, `script`
of answers, `wire` formats and errors, `sse` streaming), the replay client that answers from a
transcript (`client`), re-driving a recording against the simulator (`redrive`, which builds its
session with the runtime), and rebuilding a session from its transcript to resume it (`resume`)."""
