"""Reading stdin as lines: a size limit per line, and bytes that are handed on as they are.

``LineSplitter`` is the pure part: feed it chunks, get complete lines and ``Overlong`` markers. A line
longer than the limit is reported once (with its first bytes, so its ``id`` can still be read) and the
rest of it is discarded up to its newline; the lines after it are read normally.

``read_chunks(fd)`` yields what arrives on ``fd`` without blocking the event loop: through the loop's pipe
transport for pipes, sockets and terminals, and through a reader thread for regular files (which the
loop cannot watch). It ends at end of input.
"""

from __future__ import annotations

import asyncio
import os
import stat
import threading
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass

MAX_LINE_BYTES = 1 << 20  # 1 MiB per command line, newline excluded
HEAD_BYTES = 4096  # how much of an overlong line is kept to find its id
CHUNK_BYTES = 1 << 16


@dataclass(frozen=True, slots=True)
class Overlong:
    head: bytes


class LineSplitter:
    def __init__(self, limit: int = MAX_LINE_BYTES) -> None:
        self.limit = limit
        self._buffer = bytearray()
        self._discarding = False

    def feed(self, chunk: bytes) -> Iterator[bytes | Overlong]:
        """The lines completed by ``chunk`` (without their newline), in order."""
        buffer = self._buffer
        buffer += chunk
        start = 0
        while True:
            end = buffer.find(b"\n", start)
            if end < 0:
                break
            if self._discarding:
                self._discarding = False
            elif end - start > self.limit:
                yield Overlong(bytes(buffer[start : start + HEAD_BYTES]))
            else:
                yield bytes(buffer[start:end])
            start = end + 1
        del buffer[:start]
        if not self._discarding and len(buffer) > self.limit:
            yield Overlong(bytes(buffer[:HEAD_BYTES]))
            self._discarding = True
        if self._discarding:
            buffer.clear()

    def finish(self) -> Iterator[bytes]:
        """At end of input: the last line if it had no newline (a discarded one stays discarded)."""
        if self._buffer and not self._discarding:
            yield bytes(self._buffer)
        self._buffer.clear()
        self._discarding = False


async def read_chunks(fd: int) -> AsyncIterator[bytes]:
    """Yield the bytes arriving on ``fd`` until end of input. Cancelling stops reading; the descriptor
    itself stays open (a duplicate is read), and its blocking mode is restored."""
    try:
        regular = stat.S_ISREG(os.fstat(fd).st_mode)
    except OSError:  # no stdin at all: nothing will ever arrive
        return
    if regular:
        async for chunk in _read_in_thread(fd):
            yield chunk
        return
    was_blocking = os.get_blocking(fd)
    loop = asyncio.get_running_loop()
    reader = asyncio.StreamReader(limit=CHUNK_BYTES, loop=loop)
    pipe = os.fdopen(os.dup(fd), "rb", buffering=0)
    transport, _ = await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(reader), pipe)
    try:
        while chunk := await reader.read(CHUNK_BYTES):
            yield chunk
    finally:
        transport.close()
        if was_blocking:
            _set_blocking(fd)


async def _read_in_thread(fd: int) -> AsyncIterator[bytes]:
    loop = asyncio.get_running_loop()
    queue: asyncio.Queue[bytes] = asyncio.Queue()

    def pump() -> None:
        while True:
            try:
                chunk = os.read(fd, CHUNK_BYTES)
            except OSError:
                chunk = b""
            loop.call_soon_threadsafe(queue.put_nowait, chunk)
            if not chunk:
                return

    threading.Thread(target=pump, name="ink-rpc-stdin", daemon=True).start()
    while chunk := await queue.get():
        yield chunk


def _set_blocking(fd: int) -> None:
    try:
        os.set_blocking(fd, True)
    except OSError:
        pass
