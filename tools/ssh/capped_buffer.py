"""Output read with a cap, so that a chatty command cannot fill memory: the first and last
halves kept, what fell between counted and said.

A module of its own: `scout recon` reads OpenSSH's output into it (tools/recon/ssh_client.py)
before it has imported the rest of remote commands (tools/ssh/remote_command.py).
"""

from __future__ import annotations

OUTPUT_CAP_BYTES = 2 * 1024 * 1024


class CappedBuffer:
    """Keeps the first and last halves of a stream up to a byte cap, counting what it dropped."""

    def __init__(self, cap: int) -> None:
        self.half = cap // 2
        self.head = bytearray()
        self.tail = bytearray()
        self.omitted = 0

    def add(self, chunk: bytes) -> None:
        room = self.half - len(self.head)
        if room > 0:
            self.head += chunk[:room]
            chunk = chunk[room:]
        self.tail += chunk
        excess = len(self.tail) - self.half
        if excess > 0:
            self.omitted += excess
            del self.tail[:excess]

    def text(self) -> str:
        cut = f"\n[... {self.omitted} bytes dropped on the way in ...]\n" if self.omitted else ""
        head = self.head.decode("utf-8", "replace")
        return head + cut + self.tail.decode("utf-8", "replace")
