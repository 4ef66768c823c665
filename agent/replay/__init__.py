"""Recordings: a local Messages-API server (`server`, `sse`) the real SDK talks to, the replay
client that answers from a transcript (`client`), re-driving a recording against the simulator
(`redrive`, which builds its session with the runtime), and rebuilding a session from its
transcript to resume it (`resume`)."""
