"""The bytes of ``ink acp``: newline-delimited JSON in on stdin, out on stdout, each side in a thread.

Reading: a thread does blocking ``os.read`` on the raw descriptor (no buffered ``sys.stdin``, whose lock
would trouble interpreter shutdown, and no non-blocking mode forced on a descriptor that may be shared)
and hands the chunks to the event loop, which splits them into lines. A line longer than the limit is
reported once as ``Overlong`` and skipped up to its newline; the lines after it are read normally.

Writing: ``LineWriter.write`` encodes at once and queues; a thread does the blocking writes, so an editor
that reads slowly delays the output, never the run. Lines keep the order of the calls.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import math
import os
import queue
import select
import threading
from collections.abc import AsyncIterator, Callable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any

MAX_LINE_BYTES = 64 << 20  # a prompt may embed whole files (ACP "resource" blocks)
CHUNK_BYTES = 1 << 16
CLOSE_TIMEOUT = 5.0  # how long ``aclose`` waits for a client that stopped reading

_encode = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"), allow_nan=False).encode


@dataclass(frozen=True, slots=True)
class Overlong:
    """A line over the limit was dropped; ``size`` is how much of it had arrived when that was known."""

    size: int


class LineSplitter:
    """Chunks in, complete lines out (without their newline). Pure: no I/O."""

    def __init__(self, limit: int = MAX_LINE_BYTES) -> None:
        self.limit = limit
        self._buffer = bytearray()
        self._discarding = False

    def feed(self, chunk: bytes) -> Iterator[bytes | Overlong]:
        buffer = self._buffer
        buffer += chunk
        start = 0
        while (end := buffer.find(b"\n", start)) >= 0:
            if self._discarding:
                self._discarding = False
            elif end - start > self.limit:
                yield Overlong(end - start)
            else:
                yield bytes(buffer[start:end])
            start = end + 1
        del buffer[:start]
        if not self._discarding and len(buffer) > self.limit:
            yield Overlong(len(buffer))
            self._discarding = True
        if self._discarding:
            buffer.clear()

    def finish(self) -> Iterator[bytes]:
        """At end of input: the last line when it had no newline."""
        if self._buffer and not self._discarding:
            yield bytes(self._buffer)
        self._buffer.clear()


async def read_lines(fd: int, limit: int = MAX_LINE_BYTES) -> AsyncIterator[bytes | Overlong]:
    """The lines arriving on ``fd`` until end of input (a read error counts as the end). Cancelling stops
    the iteration; the reader thread, blocked in ``read``, is a daemon and dies with the process."""
    loop = asyncio.get_running_loop()
    chunks: asyncio.Queue[bytes] = asyncio.Queue()

    def pump() -> None:
        while True:
            try:
                chunk = os.read(fd, CHUNK_BYTES)
            except OSError:
                chunk = b""
            try:
                loop.call_soon_threadsafe(chunks.put_nowait, chunk)
            except RuntimeError:  # the loop is closed: nobody listens any more
                return
            if not chunk:
                return

    threading.Thread(target=pump, name="ink-acp-stdin", daemon=True).start()
    splitter = LineSplitter(limit)
    while chunk := await chunks.get():
        for line in splitter.feed(chunk):
            yield line
    for line in splitter.finish():
        yield line


def encode_line(obj: Mapping[str, Any]) -> bytes:
    """One JSON line, always valid UTF-8: a lone surrogate from model output becomes ``?``, and a float
    JSON cannot express (NaN, infinity, possible in a model's tool arguments) becomes null."""
    try:
        text = _encode(obj)
    except ValueError:
        text = _encode(_finite(obj))
    return (text + "\n").encode("utf-8", "replace")


def _finite(value: Any) -> Any:
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, Mapping):
        return {k: _finite(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_finite(v) for v in value]
    return value


class LineWriter:
    """Writes protocol lines to ``fd`` from a thread. ``on_closed`` hears once (on the loop) when the
    reader has gone (EPIPE); later lines are dropped. Create it with the event loop running."""

    def __init__(self, fd: int, on_closed: Callable[[], None] | None = None) -> None:
        self._fd = fd
        self._on_closed = on_closed
        self._loop = asyncio.get_running_loop()
        self._queue: queue.SimpleQueue[bytes | None] = queue.SimpleQueue()
        self.closed = False
        self._thread = threading.Thread(target=self._run, name="ink-acp-stdout", daemon=True)
        self._thread.start()

    def write(self, obj: Mapping[str, Any]) -> None:
        """Queue one line. Never blocks."""
        if not self.closed:
            self._queue.put(encode_line(obj))

    async def aclose(self) -> None:
        """Write everything queued, then stop the thread; waits at most ``CLOSE_TIMEOUT`` seconds for a
        client that does not read."""
        self._queue.put(None)
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(asyncio.to_thread(self._thread.join), CLOSE_TIMEOUT)

    def _run(self) -> None:
        while (data := self._queue.get()) is not None:
            view = memoryview(data)
            while view and not self.closed:
                try:
                    view = view[os.write(self._fd, view) :]
                except InterruptedError:
                    continue
                except BlockingIOError:  # someone made the shared descriptor non-blocking
                    select.select([], [self._fd], [], 1.0)
                except OSError:  # EPIPE: the editor is gone
                    self._gone()

    def _gone(self) -> None:
        self.closed = True
        if self._on_closed is not None:
            with contextlib.suppress(RuntimeError):  # the loop is already closed
                self._loop.call_soon_threadsafe(self._on_closed)
