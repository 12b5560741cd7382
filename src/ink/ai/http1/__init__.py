"""The providers' HTTP/1.1 client: h11 (the sans-IO protocol library httpcore is built on) driven over
an asyncio protocol, with a keep-alive pool, TLS, proxies from the environment, and connect/write
timeouts.

Why not httpx: a model call is one POST whose answer streams back, and httpx's generality is paid at
every start-up (measured: importing it ~35 ms, creating a client ~15 ms, the first request ~30 ms more
through anyio and httpcore's async stack; h11 alone imports in ~12 ms). What httpx did that a user
could notice is kept, the same way:

- Keep-alive: idle connections wait in a pool per (scheme, host, port, proxy). One is not reused once
  it has been idle ``keepalive_expiry`` seconds (httpx's 5 s) or when anything is left unread on it:
  bytes the server sent past its answer's framed body (they would be read as the next request's answer:
  a smuggled reply), or anything (EOF above all) that arrived while it was idle. It is checked when the
  answer ends and again just before reuse (httpcore's ``has_expired``), so such a connection is replaced
  by a fresh one transparently, before a byte of the request is sent. A request whose bytes went out is
  never sent again here (httpcore does not either: a POST may have reached the model); its failure is
  raised for the caller's retry policy (``ink.ai.http``).
- TLS: ``ssl.create_default_context`` over ``SSL_CERT_FILE`` or ``SSL_CERT_DIR`` when set, else
  certifi's bundle; hostname checking on. Built only for an https URL, once per process for each such
  choice; a trust store the variables name that cannot be used is an error naming it, not retried.
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

The package, one job per module: ``route`` (where a request goes, the proxy's tunnel), ``tls`` (the
trust store), ``wire`` (a socket's bytes), ``connection`` (a wire and its h11 state), ``pool``
(keep-alive), ``exchange`` (the request head, sending it, the streamed ``Response``), ``client``
(``HttpClient``, which ties them).

Failures are ``HttpError``s: ``ConnectError`` (no connection), ``Timeout``, ``ConnectionBroken`` (reset,
or closed early), ``MalformedResponse`` (not HTTP/1.1: the same server would answer so again), and
``InvalidRequest`` (cannot be sent as asked: sending again would fail the same way). A header value that
holds a line break or a control character is an ``InvalidRequest`` naming the header, never showing its
value (it is often a key).
"""

from ink.ai.http1.client import HttpClient
from ink.ai.http1.errors import (
    ConnectError,
    ConnectionBroken,
    HttpError,
    InvalidRequest,
    MalformedResponse,
    Timeout,
    TlsError,
)
from ink.ai.http1.exchange import USER_AGENT, Headers, Response
from ink.ai.http1.pool import KEEPALIVE_EXPIRY
from ink.ai.http1.tls import TrustStoreError, default_tls_context, warm_up

__all__ = [
    "KEEPALIVE_EXPIRY",
    "USER_AGENT",
    "ConnectError",
    "ConnectionBroken",
    "Headers",
    "HttpClient",
    "HttpError",
    "InvalidRequest",
    "MalformedResponse",
    "Response",
    "Timeout",
    "TlsError",
    "TrustStoreError",
    "default_tls_context",
    "warm_up",
]
