"""A body in a content encoding. ink asks for ``identity``, yet a server (or a proxy on the way) may
compress all the same: gzip and deflate are decoded with the standard library's zlib as the body streams,
in pieces of at most ``PIECE`` bytes (a small body may expand a thousandfold); any other encoding is
refused with an error naming it, instead of its bytes being read as an event stream that holds none."""

from __future__ import annotations

import zlib
from collections.abc import Iterator

from ink.ai.http1.errors import MalformedResponse
from ink.ai.printable import printable

PIECE = 1 << 20  # decoded bytes handed on at once
_WBITS = {"gzip": 16 + zlib.MAX_WBITS, "x-gzip": 16 + zlib.MAX_WBITS, "deflate": zlib.MAX_WBITS}


def decoder_for(header: str | None, status: int) -> Decoder | None:
    """The decoder a ``content-encoding`` header asks for; None for none (or ``identity``). Raises
    ``MalformedResponse`` for an encoding ink does not decode, or more than one."""
    names = [
        n.strip().lower() for n in (header or "").split(",") if n.strip().lower() not in ("", "identity")
    ]
    if not names:
        return None
    if len(names) == 1 and names[0] in _WBITS:
        return Decoder(names[0])
    shown = printable(", ".join(names))
    raise MalformedResponse(
        f"the server answered {status} in content-encoding {shown!r}, which ink does not decode (it asked "
        "for identity; gzip or deflate alone would be decoded)"
    )


class Decoder:
    """Feed it the body's pieces in order (``feed``), then ``finish`` when the body has ended."""

    __slots__ = ("_head", "_inflate", "_started", "name")

    def __init__(self, name: str) -> None:
        self.name = name
        self._inflate = zlib.decompressobj(_WBITS[name])
        # deflate: the first bytes, until they tell a zlib stream from a raw one (servers send both)
        self._head: bytes | None = b"" if name == "deflate" else None
        self._started = False

    def feed(self, data: bytes) -> Iterator[bytes]:
        """The decoded bytes ``data`` completes, in pieces. Raises ``MalformedResponse``."""
        self._started = self._started or bool(data)
        if self._head is not None:
            data = self._head + data
            if len(data) < 2:
                self._head = data
                return
            self._head = None
            if not _zlib_header(data):
                self._inflate = zlib.decompressobj(-zlib.MAX_WBITS)
        while data:
            if self._inflate.eof:
                self._next_member()
            yield from self._drain(data)
            data = self._inflate.unused_data if self._inflate.eof else self._inflate.unconsumed_tail

    def finish(self) -> Iterator[bytes]:
        """What is still held back; raises ``MalformedResponse`` if the encoded body was cut short (an
        empty body is empty, whatever its encoding)."""
        if not self._started:
            return
        yield from self._drain(b"")
        if not self._inflate.eof:
            raise MalformedResponse(f"the server's {self.name} body ended before its end")

    def _drain(self, data: bytes) -> Iterator[bytes]:
        """Decode ``data``, then what zlib still holds back after a full piece."""
        while True:
            try:
                out = self._inflate.decompress(data, PIECE)
            except zlib.error as exc:
                raise MalformedResponse(f"the server's {self.name} body does not decode ({exc})") from exc
            if out:
                yield out
            if len(out) < PIECE or self._inflate.unconsumed_tail:
                return
            data = b""

    def _next_member(self) -> None:
        """Bytes after the end: gzip allows several members one after the other; deflate nothing."""
        if self.name == "deflate":
            raise MalformedResponse("the server's deflate body goes on past its end")
        self._inflate = zlib.decompressobj(_WBITS[self.name])


def _zlib_header(data: bytes) -> bool:
    """Whether ``data`` starts as a zlib stream (RFC 1950): method 8, and the check bits."""
    return data[0] & 0x0F == 8 and (data[0] << 8 | data[1]) % 31 == 0
