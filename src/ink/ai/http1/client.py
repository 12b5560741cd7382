"""``HttpClient``: a request goes out on a pooled connection to its route, or on a new one opened under
the connect timeout (TCP, the proxy's tunnel, the TLS handshake)."""

from __future__ import annotations

import asyncio
import os
import ssl
from collections.abc import Callable, Mapping

from ink.ai.http1.connection import Connection
from ink.ai.http1.errors import ConnectError, Timeout, TlsError, oserror_text, tls_text
from ink.ai.http1.exchange import Response, exchange, request_head
from ink.ai.http1.pool import KEEPALIVE_EXPIRY, Pool
from ink.ai.http1.route import Route, tunnel
from ink.ai.http1.tls import default_tls_context
from ink.ai.http1.wire import Wire

HAPPY_EYEBALLS_DELAY = 0.25  # IPv6 and IPv4 addresses of a host tried side by side (RFC 8305), as anyio did


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
        self._env = dict(os.environ if env is None else env)
        self._ssl_context = ssl_context
        self._pool = Pool(keepalive_expiry)

    @property
    def is_closed(self) -> bool:
        return self._pool.closed

    async def aclose(self) -> None:
        await self._pool.aclose()

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
        route = Route(url, self._env)
        request = request_head(method, route, headers, content)
        connection = self._pool.take(route.key)
        if connection is None:
            connection = await self._open(route)
        try:
            return await exchange(
                connection,
                request,
                content,
                write_timeout=self.write_timeout,
                on_sent=on_sent,
                release=self._pool.release,
            )
        except BaseException:
            connection.close()
            raise

    async def _open(self, route: Route) -> Connection:
        wire = Wire()
        proxy = route.proxy
        host, port, scheme = (route.host, route.port, route.scheme) if proxy is None else proxy.hop
        # built first, outside the handlers below: a trust store that cannot be used is no host's fault
        tls = self._tls() if "https" in (scheme, route.scheme) else None
        try:
            async with asyncio.timeout(self.connect_timeout):
                await asyncio.get_running_loop().create_connection(
                    lambda: wire,
                    host,
                    port,
                    ssl=tls if scheme == "https" else None,
                    server_hostname=host if scheme == "https" else None,
                    happy_eyeballs_delay=HAPPY_EYEBALLS_DELAY,
                )
                if proxy is not None and route.scheme == "https":
                    await tunnel(wire, route, proxy)
                    assert tls is not None
                    await wire.start_tls(tls, server_hostname=route.host)
        except TimeoutError:
            wire.abort()
            raise Timeout(
                f"connecting to {route.where} took longer than {self.connect_timeout:g} s"
            ) from None
        except ssl.SSLCertVerificationError as exc:
            wire.abort()
            problem = exc.verify_message or exc.reason
            raise TlsError(f"TLS with {route.where}: certificate verify failed: {problem}") from exc
        except ssl.SSLError as exc:
            wire.abort()
            raise TlsError(f"TLS with {route.where} failed: {tls_text(exc)}") from exc
        except OSError as exc:
            wire.abort()
            raise ConnectError(f"{route.where}: {oserror_text(exc)}") from exc
        except UnicodeError as exc:  # the resolver's idna codec refuses an empty or over-long label
            wire.abort()
            raise ConnectError(f"{route.where}: cannot resolve the host name (not a valid name)") from exc
        except BaseException:
            wire.abort()
            raise
        return Connection(wire, route.key)

    def _tls(self) -> ssl.SSLContext:
        if self._ssl_context is None:
            self._ssl_context = default_tls_context(self._env)
        return self._ssl_context
