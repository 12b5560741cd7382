"""Reading stdin as lines: a size limit per line, and bytes handed on as they are (decoding, UTF-8 checks
and JSON are the protocol's).

``LineSplitter`` is the pure part: feed it chunks, get complete lines and ``Overlong`` markers. A line
longer than the limit is reported once (with its first bytes, so a protocol can still read its id) and
the rest of it is discarded up to its newline; the lines after it are read normally. At end of input a
last line without a newline is still a line (unless it was over the limit).

``read_lines(fd, limit)`` reads with blocking ``os.read`` calls on the raw descriptor in a thread and
hands the chunks to the event loop: one path for every kind of stdin (pipes, sockets, terminals, regular
files and ``/dev/null``, which the loop's pipe transport cannot watch, and a closed descriptor: end of
input at once). The descriptor is left as it is: no non-blocking mode is forced on a file description
that stdout may share, and no buffered ``sys.stdin`` is used (its lock would trouble interpreter shutdown).
"""

from __future__ import annotations

import asyncio
import os
import select
import threading
from collections.abc import AsyncIterator, Iterator

import msgspec

HEAD_BYTES = 4096  # how much of an overlong line is kept, to read its id from
CHUNK_BYTES = 1 << 16


class Overlong(msgspec.Struct, frozen=True):
    """A line over the limit, dropped: ``size`` is how much of it had arrived when that was known (the
    newline excluded), ``head`` its first bytes (at most ``HEAD_BYTES``)."""

    size: int
    head: bytes


class LineSplitter:
    """Chunks in, complete lines out (without their newline). Pure: no I/O."""

    def __init__(self, limit: int) -> None:
        self.limit = limit  # bytes per line, the newline excluded
        self._buffer = bytearray()
        self._discarding = False  # inside an overlong line already reported: drop up to its newline

    def feed(self, chunk: bytes) -> Iterator[bytes | Overlong]:
        """The lines completed by ``chunk``, in order; a line over the limit once, as ``Overlong``."""
        buffer = self._buffer
        buffer += chunk
        start = 0
        while (end := buffer.find(b"\n", start)) >= 0:
            if self._discarding:
                self._discarding = False
            elif end - start > self.limit:
                yield Overlong(end - start, bytes(buffer[start : start + HEAD_BYTES]))
            else:
                yield bytes(buffer[start:end])
            start = end + 1
        del buffer[:start]
        if not self._discarding and len(buffer) > self.limit:
            yield Overlong(len(buffer), bytes(buffer[:HEAD_BYTES]))
            self._discarding = True
        if self._discarding:
            buffer.clear()

    def finish(self) -> Iterator[bytes]:
        """At end of input: the last line if it had no newline (a discarded one stays discarded)."""
        if self._buffer and not self._discarding:
            yield bytes(self._buffer)
        self._buffer.clear()
        self._discarding = False


async def read_lines(fd: int, limit: int) -> AsyncIterator[bytes | Overlong]:
    """The lines arriving on ``fd`` until end of input (a read error counts as the end). Cancelling stops
    the iteration; the reader thread, blocked in ``read``, is a daemon and ends with the process. ``fd``
    is neither closed nor changed."""
    loop = asyncio.get_running_loop()
    chunks: asyncio.Queue[bytes] = asyncio.Queue()
    threading.Thread(target=_pump, args=(fd, loop, chunks), name="ink-stdin", daemon=True).start()
    splitter = LineSplitter(limit)
    while chunk := await chunks.get():
        for line in splitter.feed(chunk):
            yield line
    for line in splitter.finish():
        yield line


def _pump(fd: int, loop: asyncio.AbstractEventLoop, chunks: asyncio.Queue[bytes]) -> None:
    """The reader thread: every chunk read, then ``b""`` for the end of input."""
    while True:
        chunk = _read(fd)
        try:
            loop.call_soon_threadsafe(chunks.put_nowait, chunk)
        except RuntimeError:  # the loop is closed: nobody listens any more
            return
        if not chunk:
            return


def _read(fd: int) -> bytes:
    """One chunk; ``b""`` at end of input or on an error (a closed descriptor, a terminal that went)."""
    while True:
        try:
            return os.read(fd, CHUNK_BYTES)
        except BlockingIOError:  # the parent left a shared description non-blocking: wait for data
            pass
        except OSError:
            return b""
        try:
            select.select([fd], [], [])
        except (OSError, ValueError):
            return b""
