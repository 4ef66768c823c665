"""Token timing and text for a simulated model.

One stream runs at the scenario's rate; N concurrent streams share an aggregate that grows
sub-linearly (fakehost/pace.py's stream_rate, which `vllm bench serve` in a container shares).
"""

from __future__ import annotations

from dataclasses import dataclass

from sim.fakehost.pace import stream_rate

_PASSAGE_TEXT = (
    "The two DGX Spark nodes share the model across their ConnectX-7 link. Each node holds half "
    "of the weights in unified memory, and every generated token needs one all-reduce between "
    "them, so the fabric sets the pace as much as the GPU does. With RoCE the exchange is quick; "
    "over plain sockets every step waits longer."
)
_PASSAGE = _PASSAGE_TEXT.split()


@dataclass
class Pace:
    """Per-stream token rate (tokens/s) and the delay before the first token (s)."""

    tok_s: float
    ttft_s: float

    def token_delay(self, active_streams: int) -> float:
        """Seconds between two tokens of one stream while `active_streams` are generating."""
        return 1.0 / stream_rate(self.tok_s, active_streams)


def token(i: int) -> str:
    """The i-th generated token (a word with its leading space)."""
    word = _PASSAGE[i % len(_PASSAGE)]
    return word if i == 0 else " " + word


def count_tokens(text: str) -> int:
    """A rough prompt token count (about four characters per token)."""
    return max(1, len(text) // 4)
