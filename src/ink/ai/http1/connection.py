"""One connection: its socket's end (``Wire``) and the h11 state of the exchange going on over it."""

from __future__ import annotations

import select

import h11

from ink.ai.http1.errors import ConnectionBroken, MalformedResponse, oserror_text, protocol_error
from ink.ai.http1.route import Key
from ink.ai.http1.wire import Wire


class Connection:
    """One socket and the h11 state of the exchange on it."""

    __slots__ = ("h11", "idle_since", "key", "wire")

    def __init__(self, wire: Wire, key: Key) -> None:
        self.wire, self.key = wire, key
        self.h11 = h11.Connection(h11.CLIENT)
        self.idle_since = 0.0

    async def next_event(self) -> h11.Event | type[h11.NEED_DATA]:
        """The next protocol event, reading from the network until there is one."""
        while True:
            event = self.next_buffered()
            if event is not h11.NEED_DATA:
                return event
            try:
                data = await self.wire.receive()
            except OSError as exc:
                raise ConnectionBroken(oserror_text(exc)) from exc
            self.h11.receive_data(data)  # b"" is the end of the stream

    def next_buffered(self) -> h11.Event | type[h11.NEED_DATA]:
        """The next event in what has already been read; ``NEED_DATA`` when more must be read."""
        try:
            event = self.h11.next_event()
        except h11.RemoteProtocolError as exc:
            raise protocol_error(exc) from exc
        if event is h11.PAUSED:  # a server that upgraded the connection: not for us
            raise MalformedResponse("the server switched protocols")
        return event  # type: ignore[return-value]  # PAUSED is handled above

    def clean(self) -> bool:
        """Whether nothing is left unread on this connection: not in h11's buffer, not in the wire's, not
        in the socket's, and the server has not ended its side. Bytes past an answer would be read as the
        answer to the next request (a reply smuggled in after a framed body), so a connection holding
        any is never reused."""
        unread, ended = self.h11.trailing_data
        if unread or ended or self.wire.pending or self.wire.at_eof:
            return False
        transport = self.wire.transport
        if transport is None or transport.is_closing():
            return False
        sock = transport.get_extra_info("socket")
        if sock is None:
            return False
        poller = select.poll()  # as httpcore: select.select refuses a descriptor past 1023
        try:
            poller.register(sock, select.POLLIN)
            return not poller.poll(0)
        except (OSError, ValueError):
            return False

    def usable(self, now: float, expiry: float) -> bool:
        """Whether this idle connection may carry the next request: not idle too long, and nothing (EOF
        above all) has arrived on it since its last answer ended."""
        return now - self.idle_since <= expiry and self.clean()

    def close(self) -> None:
        self.wire.close()
