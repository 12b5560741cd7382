"""The socket's end of one connection: the bytes that arrived, waiting to be read, and writing that
waits while the transport's buffer is full.

asyncio's ``StreamReader`` does the same but does not say how many bytes it holds, and a connection may
go back to the pool only when nothing past its answer is left unread: bytes a server sent after a framed
body would be read as the answer to the next request (a smuggled reply). Here ``pending`` says it."""

from __future__ import annotations

import asyncio
import ssl
from collections.abc import Iterable

HIGH_WATER = 256 << 10  # bytes held unread before the transport stops reading the socket (asyncio's: 128 KiB)


class Wire(asyncio.Protocol):
    """An ``asyncio.Protocol`` for one client connection; ``transport`` is set once it is connected."""

    def __init__(self) -> None:
        self._loop = asyncio.get_running_loop()
        self.transport: asyncio.Transport | None = None
        self._received = bytearray()
        self._eof = False
        self._lost: BaseException | None = None  # what ended the connection, when it was an error
        self._arrived: asyncio.Future[None] | None = None  # ``receive`` waits on it
        self._writable: asyncio.Future[None] | None = None  # ``drain`` waits on it
        self._paused_reading = False
        self._paused_writing = False
        self._over_tls = False
        self.closed = self._loop.create_future()  # done once the connection is gone

    # -- asyncio.Protocol ---------------------------------------------------------------------------------

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        assert isinstance(transport, asyncio.Transport)
        self.transport = transport
        self._over_tls = transport.get_extra_info("sslcontext") is not None

    def data_received(self, data: bytes) -> None:
        self._received += data
        if len(self._received) > HIGH_WATER and not self._paused_reading and self.transport is not None:
            self._paused_reading = True
            self.transport.pause_reading()
        _wake(self._arrived)

    def eof_received(self) -> bool:
        self._eof = True
        _wake(self._arrived)
        return not self._over_tls  # a plain socket stays open for writing (TLS cannot), as asyncio's streams

    def connection_lost(self, exc: Exception | None) -> None:
        self._eof = True
        self._lost = exc
        _wake(self._arrived)
        _wake(self._writable)
        if not self.closed.done():
            self.closed.set_result(None)

    def pause_writing(self) -> None:
        self._paused_writing = True

    def resume_writing(self) -> None:
        self._paused_writing = False
        _wake(self._writable)

    # -- for the client -----------------------------------------------------------------------------------

    @property
    def pending(self) -> int:
        """Bytes that arrived and were not read yet."""
        return len(self._received)

    @property
    def at_eof(self) -> bool:
        """The peer ended its side (or the connection is gone) and every byte before that was read."""
        return self._eof and not self._received

    async def receive(self) -> bytes:
        """Everything that arrived and was not read yet, waiting for something if nothing has; ``b""`` at
        the end of the stream. Raises the ``OSError`` that ended the connection, once its bytes are read."""
        while not self._received:
            if self._lost is not None:
                raise self._lost
            if self._eof:
                return b""
            self._arrived = self._loop.create_future()
            try:
                await self._arrived
            finally:
                self._arrived = None
        data = bytes(self._received)
        self._received.clear()
        if self._paused_reading and self.transport is not None:
            self._paused_reading = False
            self.transport.resume_reading()
        return data

    def write(self, pieces: Iterable[bytes]) -> None:
        assert self.transport is not None
        self.transport.writelines(pieces)

    async def drain(self) -> None:
        """Wait until the transport takes more. Raises ``ConnectionResetError`` once the connection is
        gone (or the error that ended it)."""
        assert self.transport is not None
        if self.transport.is_closing():
            await asyncio.sleep(0)  # let ``connection_lost`` run, as asyncio's StreamWriter does
        while True:
            if self._lost is not None:
                raise self._lost
            if self.closed.done():
                raise ConnectionResetError("Connection lost")
            if not self._paused_writing:
                return
            self._writable = self._loop.create_future()
            try:
                await self._writable
            finally:
                self._writable = None

    async def start_tls(self, context: ssl.SSLContext, server_hostname: str) -> None:
        """TLS from here on, inside what the connection already is (a proxy's tunnel)."""
        assert self.transport is not None
        transport = await self._loop.start_tls(self.transport, self, context, server_hostname=server_hostname)
        assert transport is not None  # None only for a transport that is closing: start_tls raised then
        self.transport = transport
        self._over_tls = True

    def close(self) -> None:
        if self.transport is not None:
            self.transport.close()

    def abort(self) -> None:
        if self.transport is not None:
            self.transport.abort()


def _wake(waiter: asyncio.Future[None] | None) -> None:
    if waiter is not None and not waiter.done():
        waiter.set_result(None)
