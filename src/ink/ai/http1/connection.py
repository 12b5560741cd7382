"""One connection: its socket's streams and the h11 state of the exchange going on over it."""

from __future__ import annotations

import asyncio
import select

import h11

from ink.ai.http1.errors import ConnectionBroken, broken_text, oserror_text
from ink.ai.http1.route import READ_SIZE, Key


class Connection:
    """One socket and the h11 state of the exchange on it."""

    __slots__ = ("h11", "idle_since", "key", "reader", "writer")

    def __init__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter, key: Key) -> None:
        self.reader, self.writer, self.key = reader, writer, key
        self.h11 = h11.Connection(h11.CLIENT)
        self.idle_since = 0.0

    async def next_event(self) -> h11.Event | type[h11.NEED_DATA]:
        """The next protocol event, reading from the network until there is one."""
        while True:
            event = self.next_buffered()
            if event is not h11.NEED_DATA:
                return event
            try:
                data = await self.reader.read(READ_SIZE)
            except OSError as exc:
                raise ConnectionBroken(oserror_text(exc)) from exc
            self.h11.receive_data(data)  # b"" is the end of the stream

    def next_buffered(self) -> h11.Event | type[h11.NEED_DATA]:
        """The next event in what has already been read; ``NEED_DATA`` when more must be read."""
        try:
            event = self.h11.next_event()
        except h11.RemoteProtocolError as exc:
            raise ConnectionBroken(broken_text(exc)) from exc
        if event is h11.PAUSED:  # a server that upgraded the connection: not for us
            raise ConnectionBroken("the server switched protocols")
        return event  # type: ignore[return-value]  # PAUSED is handled above

    def usable(self, now: float, expiry: float) -> bool:
        """Whether this idle connection may carry the next request: not idle too long, and nothing (EOF
        above all) has arrived on it since its last answer ended."""
        if now - self.idle_since > expiry or self.writer.transport.is_closing() or self.reader.at_eof():
            return False
        sock = self.writer.get_extra_info("socket")
        if sock is None:
            return False
        poller = select.poll()  # as httpcore: select.select refuses a descriptor past 1023
        try:
            poller.register(sock, select.POLLIN)
            return not poller.poll(0)
        except (OSError, ValueError):
            return False

    def close(self) -> None:
        self.writer.close()
