"""Content decoding bounded by output: bombs stop at the cap with little memory, any depth."""

from __future__ import annotations

import gzip
import tracemalloc
import zlib

import pytest

from tools.web.decoding import STEP_BYTES, BoundedDecoder, DecodingError, content_codings

MB = 1024 * 1024


def bomb(layers: int, size: int) -> bytes:
    """`size` zero bytes gzipped `layers` times, built without ever holding `size` bytes."""
    inner = zlib.compressobj(9, zlib.DEFLATED, 16 + zlib.MAX_WBITS)
    block = b"\0" * MB
    data = b"".join(inner.compress(block) for _ in range(size // MB)) + inner.flush()
    for _ in range(layers - 1):
        data = gzip.compress(data, 9)
    return data


def decode_until(decoder: BoundedDecoder, body: bytes, cap: int, chunk: int = 65536) -> int:
    got = 0
    for start in range(0, len(body), chunk):
        for piece in decoder.feed(body[start : start + chunk]):
            assert len(piece) <= max(STEP_BYTES, chunk)
            got += len(piece)
            if got > cap:
                return got
    return got


@pytest.mark.slow
@pytest.mark.parametrize("layers", [1, 2, 3])
def test_a_bomb_stops_at_the_cap_with_bounded_memory(layers: int) -> None:
    body = bomb(layers, 256 * MB)  # 256 MB of zeros, a few hundred KB on the wire
    assert len(body) < 2 * MB
    tracemalloc.start()
    try:
        got = decode_until(BoundedDecoder(["gzip"] * layers), body, cap=5 * MB)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert 5 * MB < got <= 5 * MB + STEP_BYTES
    assert peak < 4 * MB  # pieces are counted and dropped; nothing near what it inflates to


def test_decoding_round_trips_gzip_deflate_raw_deflate_and_members() -> None:
    text = b"vllm serve Qwen/Qwen3.5-122B-A10B-FP8 --tensor-parallel-size 2\n" * 5000
    raw = zlib.compressobj(6, zlib.DEFLATED, -zlib.MAX_WBITS)
    cases = {
        "gzip": gzip.compress(text),
        "deflate": zlib.compress(text),
        "raw deflate": raw.compress(text) + raw.flush(),
        "two gzip members": gzip.compress(text[:1000]) + gzip.compress(text[1000:]),
    }
    for name, body in cases.items():
        coding = "deflate" if "deflate" in name else "gzip"
        decoder = BoundedDecoder([coding])
        out = b"".join(
            piece for i in range(0, len(body), 7) for piece in decoder.feed(body[i : i + 7])
        )
        assert out == text, name
    plain = BoundedDecoder([])
    assert b"".join(plain.feed(b"as is")) == b"as is"


def test_stacked_codings_are_decoded_innermost_last() -> None:
    body = zlib.compress(gzip.compress(b"hello"))  # gzip applied first, then deflate
    assert b"".join(BoundedDecoder(content_codings("gzip, deflate", 2)).feed(body)) == b"hello"


def test_coding_headers_that_are_refused_say_why() -> None:
    assert content_codings("", 1) == []
    assert content_codings("identity, X-GZIP", 1) == ["gzip"]
    with pytest.raises(DecodingError, match="stacks 2 codings; at most 1 accepted"):
        content_codings("gzip, gzip", 1)
    with pytest.raises(DecodingError, match="content-encoding br is not supported"):
        content_codings("br", 1)
    with pytest.raises(DecodingError, match="corrupt gzip data"):
        list(BoundedDecoder(["gzip"]).feed(b"not gzip at all"))
