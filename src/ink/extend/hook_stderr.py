"""A hook's stderr, read as it comes and kept bounded (R39): a named pipe in the hook's scratch folder
that ink reads into a head-and-tail buffer, so 100 MB of stderr costs neither 100 MB of memory nor of
disk (a file would have to be written whole before it could be read back capped).

    async with StderrPipe(scratch / "stderr", cap) as stderr:
        ... run the hook with 2> stderr.path ...
    stderr.text

ink holds a writing end of its own while the hook runs, so the pipe does not read as ended before the
hook opened it; once the hook is done, what is left in the pipe is drained for at most ``DRAIN_SECONDS``
(a background process of the hook may hold it open forever: its later output is not waited for).
"""

from __future__ import annotations

import asyncio
import contextlib
import os
from pathlib import Path
from types import TracebackType

from ink.tools.output import HeadTailBuffer

DRAIN_SECONDS = 0.5


class _Sink(asyncio.Protocol):
    def __init__(self, buffer: HeadTailBuffer) -> None:
        self.buffer = buffer
        self.ended = asyncio.Event()

    def data_received(self, data: bytes) -> None:
        self.buffer.feed(data)

    def eof_received(self) -> bool | None:
        self.ended.set()
        return None

    def connection_lost(self, exc: Exception | None) -> None:
        self.ended.set()


class StderrPipe:
    def __init__(self, path: Path, cap: int) -> None:
        self.path = path
        self._buffer = HeadTailBuffer(cap)
        self._hold: int | None = None
        self._transport: asyncio.ReadTransport | None = None
        self._sink: _Sink | None = None

    async def __aenter__(self) -> StderrPipe:
        """Raises ``OSError`` when the pipe cannot be made (the hook then cannot start either)."""
        os.mkfifo(self.path, 0o600)
        reading = os.open(self.path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
        try:
            self._hold = os.open(self.path, os.O_WRONLY | os.O_NONBLOCK | os.O_CLOEXEC)
            pipe = os.fdopen(reading, "rb", buffering=0)
        except BaseException:
            os.close(reading)
            self._release()
            raise
        loop = asyncio.get_running_loop()
        self._transport, self._sink = await loop.connect_read_pipe(lambda: _Sink(self._buffer), pipe)
        return self

    async def __aexit__(
        self, kind: type[BaseException] | None, error: BaseException | None, trace: TracebackType | None
    ) -> None:
        self._release()  # the hook's own ends are closed once it exited: the pipe then reads as ended
        try:
            if self._sink is not None and kind is None:
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(self._sink.ended.wait(), DRAIN_SECONDS)
        finally:
            if self._transport is not None:
                self._transport.close()

    def _release(self) -> None:
        if self._hold is not None:
            os.close(self._hold)
            self._hold = None

    @property
    def text(self) -> str:
        """What the hook wrote, its middle cut with a notice when it passed the cap."""
        return self._buffer.render()
