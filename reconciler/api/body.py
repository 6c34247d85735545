"""Reading an answer's body within a size cap, decompressing it a bounded piece at a time.

Why not httpx's own decoding: it inflates each network read (up to 64 KiB) in one go, and
deflate expands up to about 1,000-fold, so a single read of a gzip bomb becomes 64 MiB
before anything can count it -- and eight calls in flight hold eight of those. Here the raw
bytes are inflated with zlib's ``max_length`` never beyond the room left under the cap, so an
answer never holds more than ``limit`` decoded bytes, whatever it would expand to.

The client asks for ``gzip, deflate`` only (``ACCEPT_ENCODING``); an answer in any other
encoding is reported, not guessed at.
"""

from __future__ import annotations

import zlib
from collections.abc import AsyncIterator, Iterator
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import httpx


ACCEPT_ENCODING = "gzip, deflate"
_INFLATED = {"gzip", "x-gzip", "deflate"}
_PIECE = 256 * 2**10
"""The most bytes inflated in one step: zlib grows its output buffer by copying, so one big
step would briefly need twice its size."""


class _Inflater:
    """gzip or zlib-wrapped deflate (zlib tells them apart by the header), in bounded pieces."""

    def __init__(self) -> None:
        self._zlib = zlib.decompressobj(zlib.MAX_WBITS | 32)

    def pieces(self, data: bytes, room: int) -> Iterator[bytes]:
        """``data`` inflated, in pieces of at most ``room`` (>= 1) bytes each."""
        while data:
            piece = self._zlib.decompress(data, min(room, _PIECE))
            data = self._zlib.unconsumed_tail
            yield piece
            if not piece and self._zlib.eof:
                return  # trailing bytes after the end of the stream are ignored

    def rest(self) -> bytes:
        return self._zlib.flush()


async def read_body(response: httpx.Response, limit: int) -> tuple[bytes, str | None]:
    """The decoded body of an httpx response, or ``b""`` and why it could not be read (too
    large, unknown encoding, corrupt compression). Reading stops as soon as the body passes
    ``limit``."""
    if response.is_stream_consumed:  # a transport handed over a response already in memory
        content = response.content
        return (content, None) if len(content) <= limit else (b"", too_large(limit))
    encoding = response.headers.get("Content-Encoding", "")
    return await read_chunks(response.aiter_raw(), encoding, limit)


async def read_chunks(
    raw: AsyncIterator[bytes], content_encoding: str, limit: int
) -> tuple[bytes, str | None]:
    """The decoded body from its raw chunks as they arrive (``Content-Encoding`` as the
    answer gave it), or ``b""`` and why it could not be read; reading stops as soon as the
    body passes ``limit``."""
    codings = [
        token.strip().lower()
        for token in content_encoding.split(",")
        if token.strip() and token.strip().lower() != "identity"
    ]
    if len(codings) > 1 or (codings and codings[0] not in _INFLATED):
        return b"", f"a body encoded as {', '.join(codings)!r}, which was not asked for"
    inflater = _Inflater() if codings else None
    chunks: list[bytes] = []
    size = 0
    try:
        async for chunk in raw:
            pieces = [chunk] if inflater is None else inflater.pieces(chunk, limit - size + 1)
            for piece in pieces:
                size += len(piece)
                if size > limit:
                    return b"", too_large(limit)
                chunks.append(piece)
        rest = b"" if inflater is None else inflater.rest()
    except zlib.error:
        return b"", f"a {codings[0]} body that cannot be decompressed"
    if size + len(rest) > limit:
        return b"", too_large(limit)
    return b"".join([*chunks, rest]), None


def too_large(limit: int) -> str:
    return f"more than {limit / 2**20:g} MiB (decompressed); reading was stopped"
