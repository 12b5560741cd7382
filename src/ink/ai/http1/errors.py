"""The HTTP client's failures, and the words for what the OS, OpenSSL and h11 report."""

from __future__ import annotations

import socket
import ssl

import h11

from ink.ai.printable import printable


class HttpError(Exception):
    """A failure below the HTTP status: no connection, a timeout, a connection that broke."""


class ConnectError(HttpError):
    """The connection could not be opened: name resolution, refused, the proxy's tunnel, TLS."""


class TlsError(ConnectError):
    """The TLS handshake failed on the server's answer (its certificate, or no TLS at all)."""


class Timeout(HttpError):
    """Connecting or sending the request took longer than its limit."""


class ConnectionBroken(HttpError):
    """After connecting: reset, or closed before the answer was complete."""


class MalformedResponse(HttpError):
    """The answer is not HTTP/1.1 as h11 reads it (a status line, a head over h11's limit, a framing it
    refuses), or not in a form the client can read (a content encoding it does not decode): the same
    server would answer the same way again."""


class InvalidRequest(HttpError):
    """The request cannot be sent as asked (a header value, the URL's scheme, the proxy's kind)."""


def tls_text(exc: ssl.SSLError) -> str:
    if exc.reason == "WRONG_VERSION_NUMBER":  # what came back was not TLS: most often plain HTTP
        return "the server does not speak TLS there (WRONG_VERSION_NUMBER); is its URL http://?"
    return exc.reason or str(exc)


def oserror_text(exc: OSError) -> str:
    if isinstance(exc, socket.gaierror):
        return f"cannot resolve the host name ({exc.strerror or exc})"
    if isinstance(exc, ConnectionRefusedError):
        return "connection refused"
    if isinstance(exc, ConnectionResetError):
        return "connection reset by the peer"
    return exc.strerror or str(exc) or type(exc).__name__


def closed_early(exc: h11.RemoteProtocolError) -> bool:
    """Whether h11 refused an end of the stream that came before the answer's end (it raises instead of
    giving ``ConnectionClosed`` while a status line or a framed body is still owed)."""
    text = str(exc)
    return "ConnectionClosed" in text or "peer closed connection" in text or "unexpectedly closed" in text


def protocol_error(exc: h11.RemoteProtocolError) -> HttpError:
    """What h11 refusing the server's bytes means: an end of the stream that came too early (the
    connection broke), or an answer that is not HTTP/1.1."""
    text = str(exc)
    if "ConnectionClosed" in text and "SEND_RESPONSE" in text:  # h11's words for EOF before a status line
        return ConnectionBroken("the server closed the connection without answering")
    if closed_early(exc):
        return ConnectionBroken("the server closed the connection before the answer ended")
    if "Receive buffer too long" in text:  # a head (or a chunk-size line) past h11's 16 KiB limit
        return MalformedResponse("the server's answer is not valid HTTP/1.1 (its head passed 16 KiB)")
    return MalformedResponse(f"the server's answer is not valid HTTP/1.1 ({printable(text)})")
