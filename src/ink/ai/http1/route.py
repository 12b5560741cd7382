"""Where a request goes: the origin, the key of its connections in the pool, and the proxy in between
(``ink.proxies`` picks it from the environment), with the CONNECT tunnel an https request takes through
an http(s) proxy."""

from __future__ import annotations

from collections.abc import Mapping
from urllib.parse import unquote, urlsplit

import h11

from ink.ai.http1.errors import ConnectError, InvalidRequest, MalformedResponse, closed_early
from ink.ai.http1.wire import Wire
from ink.ai.printable import printable
from ink.proxies import address, proxy_for, proxy_problem

Key = tuple[str, str, int, str | None]  # scheme, host, port, proxy: connections are shared within one


class Proxy:
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


class Route:
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
        self.proxy = Proxy(proxy_url) if proxy_url else None
        # through a proxy an http request names the whole URL; an https one goes through a tunnel
        absolute = self.proxy is not None and self.scheme == "http"
        self.target = f"http://{self.authority}{path}" if absolute else path
        self.key: Key = (self.scheme, host, self.port, self.proxy.shown if self.proxy else None)
        self.where = f"{shown_host}:{self.port}" + (f" (via proxy {self.proxy.shown})" if self.proxy else "")


async def tunnel(wire: Wire, route: Route, proxy: Proxy) -> None:
    """Ask the proxy for a tunnel to the origin (``CONNECT host:port``); TLS goes inside it."""
    authority = f"{route.host}:{route.port}" if ":" not in route.host else f"[{route.host}]:{route.port}"
    state = h11.Connection(h11.CLIENT)
    fields = [("host", authority)]
    if proxy.authorization:
        fields.append(("proxy-authorization", proxy.authorization))
    head = state.send(h11.Request(method="CONNECT", target=authority, headers=fields))
    wire.write((head, state.send(h11.EndOfMessage())))
    await wire.drain()
    while True:
        try:
            event = state.next_event()
        except h11.RemoteProtocolError as exc:
            if closed_early(exc):
                raise ConnectError(
                    f"the proxy {proxy.shown} closed the connection instead of opening a tunnel"
                ) from exc
            raise MalformedResponse(
                f"the proxy {proxy.shown} did not answer CONNECT in HTTP/1.1 ({printable(str(exc))})"
            ) from exc
        if event is h11.NEED_DATA:
            state.receive_data(await wire.receive())
        elif type(event) is h11.Response:
            break
    if not 200 <= event.status_code < 300:
        reason = printable(event.reason.decode("latin-1"))
        hint = " (proxy credentials missing or wrong)" if event.status_code == 407 else ""
        raise ConnectError(
            f"the proxy {proxy.shown} refused the tunnel to {authority}: {event.status_code} {reason}{hint}"
        )
