"""Content decoding bounded by output as it happens: a compression bomb stops at the byte cap.

httpx inflates a whole network chunk before anyone can count it, and with `gzip, gzip` the
second layer multiplies the first (1.8 KB became 1 GB). Here every layer hands on at most
`STEP_BYTES` at a time and the caller stops pulling at its cap, so memory stays near
layers × STEP_BYTES whatever the ratio or the number of layers.
"""

from __future__ import annotations

import zlib
from collections.abc import Iterator

from tools.web.errors import WebFetchError

STEP_BYTES = 64 * 1024
SUPPORTED_CODINGS = ("gzip", "deflate")
ACCEPT_ENCODING = ", ".join(SUPPORTED_CODINGS)
_ALIASES = {"x-gzip": "gzip"}
GZIP_MAGIC = b"\x1f\x8b"


class DecodingError(WebFetchError):
    """The body's content coding is unknown, stacked too deep, or the data is corrupt."""


def content_codings(header: str, max_codings: int) -> list[str]:
    """The codings a Content-Encoding header applied, in the order they were applied."""
    codings = [
        _ALIASES.get(part.strip().lower(), part.strip().lower()) for part in header.split(",")
    ]
    codings = [coding for coding in codings if coding and coding != "identity"]
    unknown = [coding for coding in codings if coding not in SUPPORTED_CODINGS]
    if unknown:
        raise DecodingError(
            f"content-encoding {', '.join(unknown)} is not supported (only "
            f"{', '.join(SUPPORTED_CODINGS)})"
        )
    if len(codings) > max_codings:
        raise DecodingError(
            f"content-encoding {header.strip()!r} stacks {len(codings)} codings; at most "
            f"{max_codings} accepted (stacked compression is how decompression bombs are built)"
        )
    return codings


class _Inflater:
    """One coding layer: compressed pieces in, pieces of at most STEP_BYTES out."""

    def __init__(self, coding: str) -> None:
        self._coding = coding
        self._raw_deflate = False
        self._started = False
        self._ended = False
        self._pending = False  # the last piece filled STEP_BYTES: zlib may hold more output
        self._between_members = False
        self._carry = b""
        self._inflate = self._new()

    def _new(self) -> zlib._Decompress:
        if self._coding == "gzip":
            return zlib.decompressobj(16 + zlib.MAX_WBITS)
        return zlib.decompressobj(-zlib.MAX_WBITS if self._raw_deflate else zlib.MAX_WBITS)

    def pieces(self, data: bytes) -> Iterator[bytes]:
        while not self._ended:
            if self._between_members:
                data = self._carry + data
                if len(data) < len(GZIP_MAGIC):
                    self._carry = data
                    return
                self._between_members, self._carry = False, b""
                if not data.startswith(GZIP_MAGIC):
                    self._ended = True  # anything after the stream's end is ignored
                    return
                self._inflate = self._new()  # concatenated gzip members
            if not (data or self._pending):
                return
            try:
                out = self._inflate.decompress(data, STEP_BYTES)
            except zlib.error as exc:
                if self._coding == "deflate" and not self._started and not self._raw_deflate:
                    # Some servers send raw deflate without the zlib header; try it that way.
                    self._raw_deflate = True
                    self._inflate = self._new()
                    continue
                raise DecodingError(f"corrupt {self._coding} data ({exc})") from None
            self._started = True
            self._pending = len(out) == STEP_BYTES
            data = self._inflate.unconsumed_tail
            if self._inflate.eof:
                data = self._inflate.unused_data + data
                self._pending = False
                self._between_members = self._coding == "gzip"
                self._ended = not self._between_members
            if out:
                yield out


class BoundedDecoder:
    """Decodes a body coded with `codings` (in the order applied) one raw chunk at a time."""

    def __init__(self, codings: list[str]) -> None:
        self._layers = [_Inflater(coding) for coding in reversed(codings)]

    def feed(self, raw: bytes) -> Iterator[bytes]:
        """Decoded pieces of `raw`, each at most STEP_BYTES (raw bytes when nothing is coded);
        produced only as the caller asks for them."""
        return self._through(0, raw)

    def _through(self, index: int, data: bytes) -> Iterator[bytes]:
        if index == len(self._layers):
            yield data
            return
        for piece in self._layers[index].pieces(data):
            yield from self._through(index + 1, piece)
