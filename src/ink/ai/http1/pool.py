"""Keep-alive: idle connections wait per (scheme, host, port, proxy) for the next request to the same
place. One is handed out only if it is still usable (``Connection.usable``: not idle past the expiry, and
nothing has arrived on it since its answer ended); the most recently used goes first."""

from __future__ import annotations

import asyncio
import time

import h11

from ink.ai.http1.connection import Connection
from ink.ai.http1.route import Key

KEEPALIVE_EXPIRY = 5.0  # seconds, httpx's default
MAX_IDLE_PER_ORIGIN = 8


class Pool:
    __slots__ = ("_idle", "closed", "keepalive_expiry")

    def __init__(self, keepalive_expiry: float = KEEPALIVE_EXPIRY) -> None:
        self.keepalive_expiry = keepalive_expiry
        self._idle: dict[Key, list[Connection]] = {}
        self.closed = False

    def take(self, key: Key) -> Connection | None:
        """An idle connection to ``key`` that may carry a request, or None; unusable ones are closed."""
        idle = self._idle.get(key)
        now = time.monotonic()
        while idle:
            connection = idle.pop()  # the most recently used: the likeliest to be alive
            if connection.usable(now, self.keepalive_expiry):
                return connection
            connection.close()
        return None

    def release(self, connection: Connection) -> None:
        """A response was read to its end: keep the connection for the next request if both sides may and
        nothing past the answer is left unread."""
        state = connection.h11
        if (
            self.closed
            or state.our_state is not h11.DONE
            or state.their_state is not h11.DONE
            or not connection.clean()
        ):
            connection.close()
            return
        state.start_next_cycle()
        connection.idle_since = time.monotonic()
        idle = self._idle.setdefault(connection.key, [])
        idle.append(connection)
        if len(idle) > MAX_IDLE_PER_ORIGIN:
            idle.pop(0).close()

    async def aclose(self) -> None:
        """Close every idle connection; one given back later is closed then."""
        self.closed = True
        idle = [c for connections in self._idle.values() for c in connections]
        self._idle.clear()
        for connection in idle:
            connection.close()
        if idle:  # bounded: a TLS peer that never answers the close does not hold us
            closing = [connection.wire.closed for connection in idle]
            try:
                async with asyncio.timeout(1.0):
                    await asyncio.gather(*closing, return_exceptions=True)
            except TimeoutError:
                pass
