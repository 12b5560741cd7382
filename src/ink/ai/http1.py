"""The providers' HTTP/1.1 client: h11 (the sans-IO protocol library httpcore is built on) driven over
asyncio streams, with a keep-alive pool, TLS, proxies from the environment, and connect/write timeouts.

Why not httpx: a model call is one POST whose answer streams back, and httpx's generality is paid at
every start-up (measured: importing it ~35 ms, creating a client ~15 ms, the first request ~30 ms more
through anyio and httpcore's async stack; h11 alone imports in ~12 ms). What httpx did that a user
could notice is kept, the same way:

- Keep-alive: idle connections wait in a pool per (scheme, host, port, proxy). One is not reused once
  it has been idle ``keepalive_expiry`` seconds (httpx's 5 s) or when its socket is readable while idle
  (the server closed it, or sent something unasked): httpcore's ``has_expired`` check, made just before
  reuse, so such a connection is replaced by a fresh one transparently, before a byte of the request is
  sent. A request whose bytes went out is never sent again here (httpcore does not either: a POST may
  have reached the model); its failure is raised for the caller's retry policy (``ink.ai.http``).
- TLS: ``ssl.create_default_context`` over ``SSL_CERT_FILE`` or ``SSL_CERT_DIR`` when set, else
  certifi's bundle when certifi is importable, else the system's; hostname checking on. Built only for an
  https URL, once per process for each such choice.
- Proxies (``ink.proxies``): an https URL through an http(s) proxy is a CONNECT tunnel with TLS inside
  it; an http URL is sent in absolute form to the proxy. Credentials in the proxy URL become
  ``Proxy-Authorization: Basic``. SOCKS proxies are refused with an error that says so (httpx needed an
  extra package for them, which ink never installed).
- Timeouts: ``connect`` bounds opening the connection (TCP, the tunnel, the TLS handshake), ``write``
  sending the request. Reading is not bounded here: the SSE loop keeps its own deadlines.
- Request bodies are bytes with a ``content-length``; ``accept-encoding: identity`` (an event stream is
  not compressed, and error bodies are small).
- Left out, as nothing a model call needs: redirects (httpx did not follow them either), HTTP/2 (off in
  httpx by default), and cookies (httpx kept a service's ``set-cookie`` for the client's next requests;
  the model APIs authenticate by key and do not need them back).

Failures are ``HttpError``s: ``ConnectError`` (no connection), ``Timeout``, ``ConnectionBroken`` (reset,
closed early, or not HTTP/1.1), and ``InvalidRequest`` (cannot be sent as asked: sending again would fail
the same way). A header value that holds a line break or a control character is an ``InvalidRequest``
naming the header, never showing its value (it is often a key).
"""

from __future__ import annotations

import asyncio
import os
import select
import socket
import ssl
import time
from collections.abc import AsyncGenerator, Callable, Iterator, Mapping
from contextlib import aclosing
from urllib.parse import unquote, urlsplit

import h11

from ink import __version__
from ink.proxies import address, proxy_for, proxy_problem

KEEPALIVE_EXPIRY = 5.0  # seconds, httpx's default
MAX_IDLE_PER_ORIGIN = 8
READ_SIZE = 65536
HAPPY_EYEBALLS_DELAY = 0.25  # IPv6 and IPv4 addresses of a host tried side by side (RFC 8305), as anyio did
USER_AGENT = f"ink/{__version__}"


class HttpError(Exception):
    """A failure below the HTTP status: no connection, a timeout, a connection that broke."""


class ConnectError(HttpError):
    """The connection could not be opened: name resolution, refused, the proxy's tunnel, TLS."""


class TlsError(ConnectError):
    """The TLS handshake failed on the server's answer (its certificate, or no TLS at all)."""


class Timeout(HttpError):
    """Connecting or sending the request took longer than its limit."""


class ConnectionBroken(HttpError):
    """After connecting: reset, closed before the answer was complete, or not speaking HTTP/1.1."""


class InvalidRequest(HttpError):
    """The request cannot be sent as asked (a header value, the URL's scheme, the proxy's kind)."""


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

    __slots__ = ("_client", "_connection", "_done", "content", "headers", "reason", "status")

    def __init__(
        self, status: int, reason: str, headers: Headers, connection: _Connection, client: HttpClient
    ) -> None:
        self.status = status
        self.reason = reason
        self.headers = headers
        self.content = b""  # the body, once ``read``
        self._connection: _Connection | None = connection
        self._client = client
        self._done = False

    @property
    def text(self) -> str:
        """The body read, decoded as UTF-8 (errors replaced): error bodies are JSON or plain text."""
        return self.content.decode("utf-8", "replace")

    async def aiter_bytes(self) -> AsyncGenerator[bytes, None]:
        """The body as it arrives: what one network read completed, joined."""
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
            if pieces:
                yield b"".join(pieces)

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

    def _finish(self, connection: _Connection) -> None:
        self._done = True
        self._connection = None
        self._client._release(connection)

    def close(self) -> None:
        if self._connection is not None:
            self._connection.close()
            self._connection = None
            self._done = True


class _Connection:
    """One socket and the h11 state of the exchange on it."""

    __slots__ = ("h11", "idle_since", "key", "reader", "writer")

    def __init__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter, key: _Key) -> None:
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
                raise ConnectionBroken(_oserror_text(exc)) from exc
            self.h11.receive_data(data)  # b"" is the end of the stream

    def next_buffered(self) -> h11.Event | type[h11.NEED_DATA]:
        """The next event in what has already been read; ``NEED_DATA`` when more must be read."""
        try:
            event = self.h11.next_event()
        except h11.RemoteProtocolError as exc:
            raise ConnectionBroken(_broken_text(exc)) from exc
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


_Key = tuple[str, str, int, str | None]


class HttpClient:
    """A pool of HTTP/1.1 connections for any number of providers. ``send`` one request, read its
    ``Response``, ``close`` it; ``aclose`` the client when done (idle connections are closed; a response
    still streaming closes its own when it ends).

    ``env`` (default: the process environment, read now) gives the proxies and ``SSL_CERT_FILE`` /
    ``SSL_CERT_DIR``; ``ssl_context`` replaces the default one for every https connection."""

    def __init__(
        self,
        *,
        connect_timeout: float = 15.0,
        write_timeout: float = 60.0,
        keepalive_expiry: float = KEEPALIVE_EXPIRY,
        env: Mapping[str, str] | None = None,
        ssl_context: ssl.SSLContext | None = None,
    ) -> None:
        self.connect_timeout = connect_timeout
        self.write_timeout = write_timeout
        self.keepalive_expiry = keepalive_expiry
        self._env = dict(os.environ if env is None else env)
        self._ssl_context = ssl_context
        self._idle: dict[_Key, list[_Connection]] = {}
        self.is_closed = False

    async def aclose(self) -> None:
        self.is_closed = True
        idle = [c for connections in self._idle.values() for c in connections]
        self._idle.clear()
        for connection in idle:
            connection.close()
        if idle:  # bounded: a TLS peer that never answers the close does not hold us
            closing = [connection.writer.wait_closed() for connection in idle]
            try:
                async with asyncio.timeout(1.0):
                    await asyncio.gather(*closing, return_exceptions=True)
            except TimeoutError:
                pass

    async def send(
        self,
        method: str,
        url: str,
        *,
        headers: Mapping[str, str],
        content: bytes = b"",
        on_sent: Callable[[], None] | None = None,
    ) -> Response:
        """Send one request and wait for its status and headers. ``on_sent`` is called once the whole
        request has been handed to the network (the server's time to answer starts there)."""
        if self.is_closed:
            raise RuntimeError("the HTTP client was closed")
        route = _Route(url, self._env)
        request = _request(method, route, headers, content)
        connection = self._reuse(route.key)
        if connection is None:
            connection = await self._open(route)
        try:
            return await self._exchange(connection, request, content, on_sent)
        except BaseException:
            connection.close()
            raise

    async def _exchange(
        self,
        connection: _Connection,
        request: h11.Request,
        content: bytes,
        on_sent: Callable[[], None] | None,
    ) -> Response:
        state = connection.h11
        pieces = [state.send(request)]
        if content:  # the body as it is, not copied into the head
            pieces += state.send_with_data_passthrough(h11.Data(data=content)) or ()
        pieces.append(state.send(h11.EndOfMessage()))
        try:
            connection.writer.writelines(pieces)
            async with asyncio.timeout(self.write_timeout):
                await connection.writer.drain()
        except TimeoutError:
            raise Timeout(f"sending the request took longer than {self.write_timeout:g} s") from None
        except OSError as exc:
            raise ConnectionBroken(_oserror_text(exc)) from exc
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
        return Response(event.status_code, reason, headers, connection, self)

    def _reuse(self, key: _Key) -> _Connection | None:
        idle = self._idle.get(key)
        now = time.monotonic()
        while idle:
            connection = idle.pop()  # the most recently used: the likeliest to be alive
            if connection.usable(now, self.keepalive_expiry):
                return connection
            connection.close()
        return None

    def _release(self, connection: _Connection) -> None:
        """A response was read to its end: keep the connection for the next request if both sides may."""
        state = connection.h11
        if self.is_closed or state.our_state is not h11.DONE or state.their_state is not h11.DONE:
            connection.close()
            return
        state.start_next_cycle()
        connection.idle_since = time.monotonic()
        idle = self._idle.setdefault(connection.key, [])
        idle.append(connection)
        if len(idle) > MAX_IDLE_PER_ORIGIN:
            idle.pop(0).close()

    async def _open(self, route: _Route) -> _Connection:
        writer: asyncio.StreamWriter | None = None
        proxy = route.proxy
        try:
            async with asyncio.timeout(self.connect_timeout):
                host, port, scheme = (route.host, route.port, route.scheme) if proxy is None else proxy.hop
                tls = self._tls() if scheme == "https" else None
                reader, writer = await asyncio.open_connection(
                    host,
                    port,
                    ssl=tls,
                    server_hostname=host if tls else None,
                    happy_eyeballs_delay=HAPPY_EYEBALLS_DELAY,
                )
                if proxy is not None and route.scheme == "https":
                    await _tunnel(reader, writer, route, proxy)
                    await writer.start_tls(self._tls(), server_hostname=route.host)
        except TimeoutError:
            _abort(writer)
            raise Timeout(
                f"connecting to {route.where} took longer than {self.connect_timeout:g} s"
            ) from None
        except ssl.SSLCertVerificationError as exc:
            _abort(writer)
            problem = exc.verify_message or exc.reason
            raise TlsError(f"TLS with {route.where}: certificate verify failed: {problem}") from exc
        except ssl.SSLError as exc:
            _abort(writer)
            raise TlsError(f"TLS with {route.where} failed: {_tls_text(exc)}") from exc
        except OSError as exc:
            _abort(writer)
            raise ConnectError(f"{route.where}: {_oserror_text(exc)}") from exc
        except UnicodeError as exc:  # the resolver's idna codec refuses an empty or over-long label
            _abort(writer)
            raise ConnectError(f"{route.where}: cannot resolve the host name (not a valid name)") from exc
        except BaseException:
            _abort(writer)
            raise
        return _Connection(reader, writer, route.key)

    def _tls(self) -> ssl.SSLContext:
        if self._ssl_context is None:
            self._ssl_context = default_tls_context(self._env)
        return self._ssl_context


_TLS_CONTEXTS: dict[tuple[str, str], ssl.SSLContext] = {}


def default_tls_context(env: Mapping[str, str]) -> ssl.SSLContext:
    """The context httpx made by default: ``SSL_CERT_FILE``, else ``SSL_CERT_DIR``, else certifi's bundle
    (or the system's store without certifi). One per choice for the process: loading a bundle costs
    ~10-20 ms, and a context may serve any number of connections."""
    cafile, capath = env.get("SSL_CERT_FILE", ""), env.get("SSL_CERT_DIR", "")
    choice = (cafile, "") if cafile else ("", capath)
    context = _TLS_CONTEXTS.get(choice)
    if context is None:
        if cafile:
            context = ssl.create_default_context(cafile=cafile)
        elif capath:
            context = ssl.create_default_context(capath=capath)
        else:
            try:
                import certifi
            except ImportError:
                context = ssl.create_default_context()
            else:
                context = ssl.create_default_context(cafile=certifi.where())
        _TLS_CONTEXTS[choice] = context
    return context


class _Proxy:
    __slots__ = ("authorization", "hop", "host", "port", "scheme", "shown")

    def __init__(self, url: str) -> None:
        problem = proxy_problem(url)
        if problem is not None:
            raise InvalidRequest(problem)
        parts = urlsplit(url)
        self.scheme = parts.scheme.lower()
        self.shown = f"{self.scheme}://{parts.hostname}" + (f":{parts.port}" if parts.port else "")
        self.host, self.port = address(url)  # both checked by ``proxy_problem``
        self.hop = (self.host, self.port, self.scheme)  # where the connection goes first
        self.authorization: str | None = None
        if parts.username is not None:
            import base64  # only for a proxy with credentials

            pair = f"{unquote(parts.username)}:{unquote(parts.password or '')}".encode()
            self.authorization = "Basic " + base64.b64encode(pair).decode("ascii")


class _Route:
    """Where a request goes: the origin, its pool key, and the proxy (if any) in between."""

    __slots__ = ("authority", "host", "key", "port", "proxy", "scheme", "target", "where")

    def __init__(self, url: str, env: Mapping[str, str]) -> None:
        parts = urlsplit(url)
        self.scheme = parts.scheme.lower()
        if self.scheme not in ("http", "https"):
            raise InvalidRequest(f"{url!r} is not an http:// or https:// URL")
        host = parts.hostname
        try:
            port = parts.port
        except ValueError as exc:
            raise InvalidRequest(f"{url!r} has an invalid port") from exc
        if not host:
            raise InvalidRequest(f"{url!r} names no host")
        if not host.isascii():  # an international name goes on the wire in its ASCII (punycode) form
            try:
                host = host.encode("idna").decode("ascii")
            except UnicodeError:  # an empty or over-long label, a character no name may hold
                raise ConnectError(f"{url!r}: cannot resolve the host name (not a valid name)") from None
        self.host = host
        self.port = port or (443 if self.scheme == "https" else 80)
        default_port = port is None or port == (443 if self.scheme == "https" else 80)
        shown_host = f"[{host}]" if ":" in host else host
        self.authority = shown_host if default_port else f"{shown_host}:{self.port}"
        path = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
        proxy_url = proxy_for(url, env)
        self.proxy = _Proxy(proxy_url) if proxy_url else None
        # through a proxy an http request names the whole URL; an https one goes through a tunnel
        absolute = self.proxy is not None and self.scheme == "http"
        self.target = f"http://{self.authority}{path}" if absolute else path
        self.key: _Key = (self.scheme, host, self.port, self.proxy.shown if self.proxy else None)
        self.where = f"{shown_host}:{self.port}" + (f" (via proxy {self.proxy.shown})" if self.proxy else "")


def _request(method: str, route: _Route, headers: Mapping[str, str], content: bytes) -> h11.Request:
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


async def _tunnel(
    reader: asyncio.StreamReader, writer: asyncio.StreamWriter, route: _Route, proxy: _Proxy
) -> None:
    """Ask the proxy for a tunnel to the origin (``CONNECT host:port``); TLS goes inside it."""
    authority = f"{route.host}:{route.port}" if ":" not in route.host else f"[{route.host}]:{route.port}"
    state = h11.Connection(h11.CLIENT)
    fields = [("host", authority)]
    if proxy.authorization:
        fields.append(("proxy-authorization", proxy.authorization))
    writer.write(state.send(h11.Request(method="CONNECT", target=authority, headers=fields)))
    writer.write(state.send(h11.EndOfMessage()))
    await writer.drain()
    while True:
        try:
            event = state.next_event()
        except h11.RemoteProtocolError as exc:
            if _closed_early(exc):
                raise ConnectError(
                    f"the proxy {proxy.shown} closed the connection instead of opening a tunnel"
                ) from exc
            raise ConnectError(f"the proxy {proxy.shown} did not answer CONNECT in HTTP/1.1: {exc}") from exc
        if event is h11.NEED_DATA:
            state.receive_data(await reader.read(READ_SIZE))
        elif type(event) is h11.Response:
            break
    if not 200 <= event.status_code < 300:
        reason = event.reason.decode("latin-1")
        hint = " (proxy credentials missing or wrong)" if event.status_code == 407 else ""
        raise ConnectError(
            f"the proxy {proxy.shown} refused the tunnel to {authority}: {event.status_code} {reason}{hint}"
        )


def _abort(writer: asyncio.StreamWriter | None) -> None:
    if writer is not None:
        writer.transport.abort()


def _tls_text(exc: ssl.SSLError) -> str:
    if exc.reason == "WRONG_VERSION_NUMBER":  # what came back was not TLS: most often plain HTTP
        return "the server does not speak TLS there (WRONG_VERSION_NUMBER); is its URL http://?"
    return exc.reason or str(exc)


def _oserror_text(exc: OSError) -> str:
    if isinstance(exc, socket.gaierror):
        return f"cannot resolve the host name ({exc.strerror or exc})"
    if isinstance(exc, ConnectionRefusedError):
        return "connection refused"
    if isinstance(exc, ConnectionResetError):
        return "connection reset by the peer"
    return exc.strerror or str(exc) or type(exc).__name__


def _closed_early(exc: h11.RemoteProtocolError) -> bool:
    """Whether h11 refused an end of the stream that came before the answer's end (it raises instead of
    giving ``ConnectionClosed`` while a status line or a framed body is still owed)."""
    text = str(exc)
    return "ConnectionClosed" in text or "peer closed connection" in text or "unexpectedly closed" in text


def _broken_text(exc: h11.RemoteProtocolError) -> str:
    text = str(exc)
    if "ConnectionClosed" in text and "SEND_RESPONSE" in text:  # h11's words for EOF before a status line
        return "the server closed the connection without answering"
    if _closed_early(exc):
        return "the server closed the connection before the answer ended"
    return f"the server's answer is not valid HTTP/1.1 ({text})"
