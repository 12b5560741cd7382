"""One request and its answer over a connection: the request head (checked before anything is sent), the
request written under the write timeout, and the ``Response`` whose body streams from the connection."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncGenerator, Callable, Iterator, Mapping
from contextlib import aclosing
from typing import TYPE_CHECKING

import h11

from ink import __version__
from ink.ai.http1.connection import Connection
from ink.ai.http1.errors import ConnectionBroken, InvalidRequest, Timeout, oserror_text
from ink.ai.http1.route import Route

if TYPE_CHECKING:
    from ink.ai.http1.encoding import Decoder

USER_AGENT = f"ink/{__version__}"


class Headers:
    """A response's headers: case-insensitive lookup; repeated fields are joined with ``, ``."""

    __slots__ = ("_fields",)

    def __init__(self, fields: list[tuple[bytes, bytes]]) -> None:
        self._fields = fields  # h11 gives names lower-cased

    def get(self, name: str, default: str | None = None) -> str | None:
        key = name.lower().encode("latin-1")
        values = [value.decode("latin-1") for field, value in self._fields if field == key]
        return ", ".join(values) if values else default

    def __getitem__(self, name: str) -> str:
        value = self.get(name)
        if value is None:
            raise KeyError(name)
        return value

    def __contains__(self, name: object) -> bool:
        return isinstance(name, str) and self.get(name) is not None

    def items(self) -> Iterator[tuple[str, str]]:
        for name, value in self._fields:
            yield name.decode("latin-1"), value.decode("latin-1")


class Response:
    """An answer whose status and headers have arrived and whose body streams: ``aiter_bytes`` once, or
    ``read``. ``close`` (always, also after an error) hands a finished connection back to the pool and
    closes one whose body was not read to its end."""

    __slots__ = ("_connection", "_done", "_release", "content", "headers", "reason", "status")

    def __init__(
        self,
        status: int,
        reason: str,
        headers: Headers,
        connection: Connection,
        release: Callable[[Connection], None],
    ) -> None:
        self.status = status
        self.reason = reason
        self.headers = headers
        self.content = b""  # the body, once ``read``
        self._connection: Connection | None = connection
        self._release = release
        self._done = False

    @property
    def text(self) -> str:
        """The body read, decoded as UTF-8 (errors replaced): error bodies are JSON or plain text."""
        return self.content.decode("utf-8", "replace")

    async def aiter_bytes(self) -> AsyncGenerator[bytes, None]:
        """The body as it arrives: what one network read completed, joined; decoded when the server
        used a content encoding (``ink.ai.http1.encoding``). Raises ``MalformedResponse`` for an
        encoding that is not decoded, or an encoded body that does not decode."""
        encoding = self.headers.get("content-encoding")
        decoder = _decoder(encoding, self.status) if encoding else None
        while not self._done:
            connection = self._connection
            if connection is None:
                raise ConnectionBroken("the response was closed before its body was read")
            pieces: list[bytes] = []
            while True:
                event = await connection.next_event() if not pieces else connection.next_buffered()
                if event is h11.NEED_DATA:
                    break
                if type(event) is h11.Data:
                    pieces.append(bytes(event.data))
                elif type(event) is h11.EndOfMessage:
                    self._finish(connection)
                    break
                elif type(event) is h11.ConnectionClosed:
                    raise ConnectionBroken("the server closed the connection before the body ended")
            if not pieces:
                continue
            if decoder is None:
                yield b"".join(pieces)
            else:
                for piece in decoder.feed(b"".join(pieces)):
                    yield piece
        if decoder is not None:
            for piece in decoder.finish():
                yield piece

    async def read(self, limit: int | None = None) -> bytes:
        """The body, or its first ``limit`` bytes: reading stops there (``close`` then drops the
        connection), so a server that streams an endless body is not held in memory."""
        pieces: list[bytes] = []
        size = 0
        async with aclosing(self.aiter_bytes()) as body:
            async for piece in body:
                pieces.append(piece)
                size += len(piece)
                if limit is not None and size >= limit:
                    break
        self.content = b"".join(pieces)[:limit]
        return self.content

    def _finish(self, connection: Connection) -> None:
        self._done = True
        self._connection = None
        self._release(connection)

    def close(self) -> None:
        if self._connection is not None:
            self._connection.close()
            self._connection = None
            self._done = True


def _decoder(encoding: str, status: int) -> Decoder | None:
    from ink.ai.http1.encoding import decoder_for  # zlib only for a server that encodes anyway

    return decoder_for(encoding, status)


def request_head(method: str, route: Route, headers: Mapping[str, str], content: bytes) -> h11.Request:
    """The request head, checked: a value with a line break or a control character, or a character
    outside latin-1, is an ``InvalidRequest`` naming the header (not its value, often a secret)."""
    fields: list[tuple[bytes, bytes]] = [(b"host", route.authority.encode("ascii"))]
    given = {name.lower() for name in headers}
    if "user-agent" not in given:
        fields.append((b"user-agent", USER_AGENT.encode("ascii")))
    if "accept-encoding" not in given:
        fields.append((b"accept-encoding", b"identity"))
    for name, value in headers.items():
        try:
            fields.append((name.encode("latin-1"), value.strip(" \t").encode("latin-1")))
        except UnicodeEncodeError:
            raise InvalidRequest(
                f"the header {name!r} holds a character HTTP headers cannot carry (only latin-1 text)"
            ) from None
    fields.append((b"content-length", str(len(content)).encode("ascii")))
    if route.proxy is not None and route.proxy.authorization and route.scheme == "http":
        fields.append((b"proxy-authorization", route.proxy.authorization.encode("ascii")))
    try:
        return h11.Request(method=method, target=route.target, headers=fields)
    except h11.LocalProtocolError:
        raise InvalidRequest(_bad_header(fields)) from None


def _bad_header(fields: list[tuple[bytes, bytes]]) -> str:
    for name, value in fields:
        try:
            h11.Request(method="GET", target="/", headers=[(name, value)], http_version="1.0")
        except h11.LocalProtocolError:
            shown = name.decode("latin-1")
            return (
                f"the header {shown!r} cannot be sent: its name must be a token and its value one line "
                "without control characters"
            )
    return "the request head is not valid HTTP/1.1"


async def exchange(
    connection: Connection,
    request: h11.Request,
    content: bytes,
    *,
    write_timeout: float,
    on_sent: Callable[[], None] | None,
    release: Callable[[Connection], None],
) -> Response:
    """Send ``request`` with its body and wait for the answer's status and headers (1xx answers are
    passed over). ``release`` gets the connection back once the body has been read to its end."""
    state = connection.h11
    pieces = [state.send(request)]
    if content:  # the body as it is, not copied into the head
        pieces += state.send_with_data_passthrough(h11.Data(data=content)) or ()
    pieces.append(state.send(h11.EndOfMessage()))
    try:
        connection.wire.write(pieces)
        async with asyncio.timeout(write_timeout):
            await connection.wire.drain()
    except TimeoutError:
        raise Timeout(f"sending the request took longer than {write_timeout:g} s") from None
    except OSError as exc:
        raise ConnectionBroken(oserror_text(exc)) from exc
    if on_sent is not None:
        on_sent()
    while True:
        event = await connection.next_event()
        if type(event) is h11.Response:
            break
        if type(event) is h11.ConnectionClosed:
            raise ConnectionBroken("the server closed the connection without answering")
        # an InformationalResponse (1xx): the answer is still to come
    headers = Headers(list(event.headers))
    reason = event.reason.decode("latin-1")
    return Response(event.status_code, reason, headers, connection, release)
