"""The providers' HTTP/1.1 client (``ink.ai.http1``) against real peers on 127.0.0.1: keep-alive and
its limits, bodies however they are framed and cut, a server that goes away, TLS with a certificate
authority made for the test, proxies (a CONNECT tunnel, a forward proxy, credentials, NO_PROXY,
SOCKS refused), and request heads that cannot be sent. Provider-level behaviour over it (retries, SSE,
deadlines, aborts) is proven in the other tests of this package."""

from __future__ import annotations

import asyncio
import base64
from collections.abc import Mapping
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ink.ai.errors import BadRequest, TlsFailed
from ink.ai.http import RetryPolicy
from ink.ai.http1 import ConnectError, ConnectionBroken, HttpClient, InvalidRequest, Timeout
from ink.ai.openai import OpenAIProvider
from ink.ai.stream import RetryScheduled
from tests.ai.helpers import collect, done_message, make_request
from tests.ai.wire_peers import Authority, CountingProxy, Received, ScriptedServer, make_authority
from tests.fakeserver import FakeModelServer


@pytest.fixture(scope="module")
def authority(tmp_path_factory: pytest.TempPathFactory) -> Authority:
    return make_authority(tmp_path_factory.mktemp("ca"))


async def fetch(client: HttpClient, url: str, headers: Mapping[str, str] | None = None) -> tuple[int, bytes]:
    response = await client.send("POST", url, headers=headers or {}, content=b'{"q": 1}')
    try:
        return response.status, await response.read()
    finally:
        response.close()


async def test_sequential_requests_reuse_one_connection() -> None:
    async with ScriptedServer() as server:
        client = HttpClient(env={})
        answers = [await fetch(client, f"http://127.0.0.1:{server.port}/v1/{i}") for i in range(3)]
        await client.aclose()
    assert answers == [(200, f"hello /v1/{i}".encode()) for i in range(3)]
    assert server.connections == 1
    first = server.requests[0]
    assert first.body == b'{"q": 1}' and first.headers["content-length"] == "8"
    assert first.headers["host"] == f"127.0.0.1:{server.port}"
    assert first.headers["accept-encoding"] == "identity"


async def test_a_connection_on_a_high_descriptor_is_reused_too() -> None:
    """A process holding many files (MCP servers, tools' pipes) gets socket descriptors past 1023, which
    ``select.select`` refuses: the idle check must still see a live connection as live."""
    import os
    import resource

    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if hard != resource.RLIM_INFINITY and hard < 2048:
        pytest.skip(f"this process may not open 1,100 more files (hard limit {hard})")
    resource.setrlimit(resource.RLIMIT_NOFILE, (max(soft, 2048), hard))
    filler = os.open(os.devnull, os.O_RDONLY)
    held = [os.dup(filler) for _ in range(1100)]
    try:
        async with ScriptedServer() as server:
            client = HttpClient(env={})
            for i in range(2):
                assert await fetch(client, f"http://127.0.0.1:{server.port}/{i}") == (
                    200,
                    f"hello /{i}".encode(),
                )
            await client.aclose()
        assert server.connections == 1
    finally:
        for fd in [filler, *held]:
            os.close(fd)
        resource.setrlimit(resource.RLIMIT_NOFILE, (soft, hard))


async def test_a_connection_the_server_closed_while_idle_is_replaced_before_the_request_is_sent() -> None:
    """The server answers (keep-alive, by HTTP/1.1's default) and then closes the connection while the
    client holds it idle: the next request goes out once, on a new connection, without an error."""

    async def answer_then_hang_up(request: Received, writer: asyncio.StreamWriter) -> bool:
        writer.write(b"HTTP/1.1 200 OK\r\ncontent-length: 2\r\n\r\nok")
        await writer.drain()
        return False  # closes the connection

    async with ScriptedServer(answer_then_hang_up) as server:
        client = HttpClient(env={})
        url = f"http://127.0.0.1:{server.port}/"
        assert await fetch(client, url) == (200, b"ok")
        await server.closed.wait()
        assert await fetch(client, url) == (200, b"ok")
        await client.aclose()
    assert server.connections == 2 and len(server.requests) == 2, "nothing was sent twice"


async def test_connection_close_is_honoured() -> None:
    async def close_after(request: Received, writer: asyncio.StreamWriter) -> bool:
        writer.write(b"HTTP/1.1 200 OK\r\nconnection: close\r\ncontent-length: 2\r\n\r\nok")
        await writer.drain()
        return True  # the server would go on; the client must not

    async with ScriptedServer(close_after) as server:
        client = HttpClient(env={})
        for _ in range(2):
            assert await fetch(client, f"http://127.0.0.1:{server.port}/") == (200, b"ok")
        await client.aclose()
    assert server.connections == 2


async def test_a_body_read_until_the_server_closes() -> None:
    """Neither a length nor chunks: the body ends with the connection (HTTP/1.0 style)."""

    async def until_close(request: Received, writer: asyncio.StreamWriter) -> bool:
        writer.write(b"HTTP/1.1 200 OK\r\n\r\nall of it")
        await writer.drain()
        return False

    async with ScriptedServer(until_close) as server:
        client = HttpClient(env={})
        assert await fetch(client, f"http://127.0.0.1:{server.port}/") == (200, b"all of it")
        await client.aclose()


@pytest.mark.parametrize(
    "head, sent",
    [
        (b"content-length: 100\r\n\r\n", b"only ten b"),
        (b"transfer-encoding: chunked\r\n\r\n", b"a\r\nonly ten b\r\n"),
    ],
    ids=["content-length", "chunked"],
)
async def test_a_server_closing_mid_body_is_a_broken_connection(head: bytes, sent: bytes) -> None:
    async def cut_short(request: Received, writer: asyncio.StreamWriter) -> bool:
        writer.write(b"HTTP/1.1 200 OK\r\n" + head + sent)
        await writer.drain()
        return False

    async with ScriptedServer(cut_short) as server:
        client = HttpClient(env={})
        response = await client.send("POST", f"http://127.0.0.1:{server.port}/", headers={})
        received = b""
        with pytest.raises(ConnectionBroken, match="closed the connection before the answer ended"):
            async for piece in response.aiter_bytes():
                received += piece
        response.close()
        await client.aclose()
    assert received == b"only ten b"


async def test_a_server_closing_without_answering_is_a_broken_connection() -> None:
    async def hang_up(request: Received, writer: asyncio.StreamWriter) -> bool:
        return False

    async with ScriptedServer(hang_up) as server:
        client = HttpClient(env={})
        with pytest.raises(ConnectionBroken, match=r"without answering|before the answer ended"):
            await fetch(client, f"http://127.0.0.1:{server.port}/")
        await client.aclose()
    assert len(server.requests) == 1, "a request that went out is not sent again"


def framed(body: bytes, cuts: list[int], chunked: bool) -> bytes:
    if not chunked:
        return b"HTTP/1.1 200 OK\r\ncontent-length: %d\r\n\r\n%s" % (len(body), body)
    pieces, start = [], 0
    for end in [*sorted(set(cuts)), len(body)]:
        if end > start:
            pieces.append(b"%x\r\n%s\r\n" % (end - start, body[start:end]))
            start = end
    return b"HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n" + b"".join(pieces) + b"0\r\n\r\n"


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    body=st.binary(max_size=3000),
    cuts=st.lists(st.integers(min_value=0, max_value=3000), max_size=8),
    writes=st.lists(st.integers(min_value=1, max_value=4000), max_size=8),
    chunked=st.booleans(),
)
def test_a_body_reads_the_same_however_it_is_framed_and_cut(
    body: bytes, cuts: list[int], writes: list[int], chunked: bool
) -> None:
    """Content-length or chunks of any sizes, written to the network in pieces cut anywhere (inside the
    head, a chunk-size line, a chunk): the body read is the body sent, and the connection is reused."""
    raw = framed(body, [c for c in cuts if c < len(body)], chunked)
    bounds = sorted({w for w in writes if w < len(raw)})

    async def in_pieces(request: Received, writer: asyncio.StreamWriter) -> bool:
        start = 0
        for end in [*bounds, len(raw)]:
            writer.write(raw[start:end])
            await writer.drain()
            await asyncio.sleep(0)  # let the client read what is there so far
            start = end
        return True

    async def run() -> tuple[list[tuple[int, bytes]], int]:
        async with ScriptedServer(in_pieces) as server:
            client = HttpClient(env={})
            answers = [await fetch(client, f"http://127.0.0.1:{server.port}/") for _ in range(2)]
            await client.aclose()
            return answers, server.connections

    answers, connections = asyncio.run(run())
    assert answers == [(200, body), (200, body)]
    assert connections == 1


async def test_aclose_closes_the_idle_connections() -> None:
    async with ScriptedServer() as server:
        client = HttpClient(env={})
        await fetch(client, f"http://127.0.0.1:{server.port}/")
        await client.aclose()
        await asyncio.wait_for(server.closed.wait(), 10)
        with pytest.raises(RuntimeError, match="closed"):
            await fetch(client, f"http://127.0.0.1:{server.port}/")


# -- TLS -----------------------------------------------------------------------------------------------


async def test_tls_with_a_certificate_trusted_through_ssl_cert_file(authority: Authority) -> None:
    async with ScriptedServer(tls=authority.server_context()) as server:
        client = HttpClient(env={"SSL_CERT_FILE": str(authority.ca_file)})
        for _ in range(2):
            assert await fetch(client, f"https://127.0.0.1:{server.port}/v1") == (200, b"hello /v1")
        await client.aclose()
    assert server.connections == 1


async def test_tls_with_an_untrusted_certificate_is_refused(authority: Authority) -> None:
    """Without the test's authority (certifi's bundle or the system's), the handshake fails: no request."""
    async with ScriptedServer(tls=authority.server_context()) as server:
        client = HttpClient(env={})
        with pytest.raises(ConnectError, match="certificate verify failed"):
            await fetch(client, f"https://127.0.0.1:{server.port}/")
        await client.aclose()
    assert server.requests == []


# -- proxies -------------------------------------------------------------------------------------------


async def test_https_to_a_plain_http_server_says_the_url_may_be_http() -> None:
    """An https:// base URL at a local server that speaks plain HTTP: OpenSSL's WRONG_VERSION_NUMBER
    alone does not tell the user what to change."""
    with FakeModelServer() as server:
        client = HttpClient(env={})
        url = server.openai_base_url.replace("http://", "https://")
        with pytest.raises(ConnectError, match=r"does not speak TLS there .*; is its URL http://\?$"):
            await fetch(client, url + "/chat/completions")
        await client.aclose()


async def test_a_refused_tls_handshake_is_not_retried() -> None:
    """The same server gives the same TLS answer: the provider raises at once, no retry announced."""
    with FakeModelServer() as server:
        url = server.openai_base_url.replace("http://", "https://")
        retry = RetryPolicy(max_attempts=4, base_delay=0.001, jitter=0.0)
        provider = OpenAIProvider(api_key="k", base_url=url, retry=retry)
        seen: list[object] = []
        with pytest.raises(TlsFailed, match="does not speak TLS there"):
            async for event in provider.stream(make_request()):
                seen.append(event)
        await provider.aclose()
    assert not any(isinstance(e, RetryScheduled) for e in seen)


async def test_https_goes_through_a_connect_tunnel_with_tls_inside(authority: Authority) -> None:
    """``model.test`` resolves nowhere but in the proxy: an answer proves the tunnel carried it; the
    certificate is checked against that name; the tunnel is kept for the next request."""
    async with ScriptedServer(tls=authority.server_context()) as server, CountingProxy() as proxy:
        env = {"HTTPS_PROXY": proxy.url, "SSL_CERT_FILE": str(authority.ca_file)}
        client = HttpClient(env=env)
        for _ in range(2):
            assert await fetch(client, f"https://model.test:{server.port}/v1") == (200, b"hello /v1")
        await client.aclose()
    assert proxy.connects == [f"model.test:{server.port}"]
    assert server.requests[0].headers["host"] == f"model.test:{server.port}"


async def test_the_certificate_must_name_the_host_behind_the_tunnel(authority: Authority) -> None:
    async with ScriptedServer(tls=authority.server_context()) as server, CountingProxy() as proxy:
        client = HttpClient(env={"HTTPS_PROXY": proxy.url, "SSL_CERT_FILE": str(authority.ca_file)})
        with pytest.raises(ConnectError, match="certificate verify failed: Hostname mismatch"):
            await fetch(client, f"https://other.test:{server.port}/")
        await client.aclose()
    assert proxy.connects == [f"other.test:{server.port}"] and server.requests == []


async def test_an_https_proxy_carries_tls_inside_tls(authority: Authority) -> None:
    """The proxy itself spoken to over TLS (its certificate checked too), the service's TLS inside."""
    async with (
        ScriptedServer(tls=authority.server_context()) as server,
        CountingProxy(tls=authority.server_context()) as proxy,
    ):
        assert proxy.url.startswith("https://")
        client = HttpClient(env={"HTTPS_PROXY": proxy.url, "SSL_CERT_FILE": str(authority.ca_file)})
        for _ in range(2):
            assert await fetch(client, f"https://model.test:{server.port}/v1") == (200, b"hello /v1")
        await client.aclose()
    assert proxy.connects == [f"model.test:{server.port}"]


async def test_http_goes_to_a_forward_proxy_in_absolute_form() -> None:
    async with ScriptedServer() as server, CountingProxy() as proxy:
        client = HttpClient(env={"http_proxy": proxy.url})
        url = f"http://model.test:{server.port}/v1/chat?x=1"
        assert await fetch(client, url) == (200, f"hello {url}".encode())
        await client.aclose()
    assert proxy.forwarded == [url] and proxy.connects == []
    assert server.requests[0].target == url


async def test_proxy_credentials_become_basic_proxy_authorization(authority: Authority) -> None:
    async with ScriptedServer(tls=authority.server_context()) as server, CountingProxy() as proxy:
        proxy_url = f"http://us%40er:p%3Ass@127.0.0.1:{proxy.port}"
        client = HttpClient(env={"HTTPS_PROXY": proxy_url, "SSL_CERT_FILE": str(authority.ca_file)})
        await fetch(client, f"https://model.test:{server.port}/")
        await client.aclose()
    assert proxy.authorizations == ["Basic " + base64.b64encode(b"us@er:p:ss").decode()]
    assert "proxy-authorization" not in server.requests[0].headers, "the origin never sees them"


async def test_a_proxy_refusing_the_tunnel_is_a_connect_error_that_says_so() -> None:
    async with CountingProxy(refuse="407 Proxy Authentication Required") as proxy:
        client = HttpClient(env={"ALL_PROXY": proxy.url})
        with pytest.raises(ConnectError, match=r"refused the tunnel.*407.*credentials") as caught:
            await fetch(client, "https://model.test:443/")
        await client.aclose()
    assert "model.test:443" in str(caught.value)


@pytest.mark.parametrize("said", [b"", b"HTTP/1.1 200 Conn"], ids=["silent", "mid-status-line"])
async def test_a_proxy_that_dies_mid_connect_is_a_connect_error_that_says_so(said: bytes) -> None:
    """The proxy reads CONNECT and hangs up, before answering or half-way through its status line: a
    ``ConnectError`` in words (not h11's state-machine message), at once, with nothing sent twice."""

    async def die(request: Received, writer: asyncio.StreamWriter) -> bool:
        writer.write(said)
        await writer.drain()
        return False

    async with ScriptedServer(die) as proxy:
        client = HttpClient(env={"HTTPS_PROXY": f"http://127.0.0.1:{proxy.port}"}, connect_timeout=10)
        tunnel = (
            rf"the proxy http://127\.0\.0\.1:{proxy.port} closed the connection instead of opening a tunnel"
        )
        with pytest.raises(ConnectError, match=tunnel):
            await fetch(client, "https://model.test/")
        await client.aclose()
    assert [(r.method, r.target) for r in proxy.requests] == [("CONNECT", "model.test:443")]


async def test_no_proxy_sends_the_host_direct() -> None:
    """``model.invalid`` (a name that never resolves) named in NO_PROXY is not sent to the proxy: the
    client tries it directly and fails to resolve it, and the proxy saw nothing."""
    async with CountingProxy() as proxy:
        env = {"HTTPS_PROXY": proxy.url, "HTTP_PROXY": proxy.url, "NO_PROXY": "example.org, .invalid"}
        client = HttpClient(env=env, connect_timeout=5)
        with pytest.raises(ConnectError, match=r"api\.model\.invalid:443: cannot resolve the host name"):
            await fetch(client, "https://api.model.invalid/")
        await client.aclose()
    assert proxy.connects == [] and proxy.forwarded == [] and proxy.authorizations == []


async def test_a_host_name_the_resolver_refuses_is_a_connect_error_not_a_crash() -> None:
    client = HttpClient(env={})
    with pytest.raises(ConnectError, match=r"a\.\.b:80: cannot resolve the host name"):
        await fetch(client, "http://a..b/v1")
    with pytest.raises(ConnectError, match="cannot resolve the host name"):
        await fetch(client, f"http://{'x' * 64}.example/v1")
    for international in ("ü..b", "ü" * 64 + ".example", "\udcff.example"):  # the idna codec refuses
        with pytest.raises(ConnectError, match="cannot resolve the host name"):
            await fetch(client, f"http://{international}/v1")


async def test_a_socks_proxy_is_refused_with_a_clear_error() -> None:
    client = HttpClient(env={"ALL_PROXY": "socks5://user:secret@127.0.0.1:1080"})
    refused = r"socks5 proxy; ink speaks only to http:// and https://"
    with pytest.raises(InvalidRequest, match=refused) as caught:
        await fetch(client, "https://api.example.org/")
    assert "secret" not in str(caught.value)


async def test_a_provider_reaches_the_fake_server_through_a_forward_proxy(
    fake_server: FakeModelServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The providers read the proxy from the environment, as they did with httpx."""
    fake_server.script("through the proxy")
    async with CountingProxy() as proxy:
        monkeypatch.setenv("HTTP_PROXY", proxy.url)
        base_url = f"http://model.test:{fake_server.port}/v1"
        provider = OpenAIProvider(api_key="k", base_url=base_url)
        message = done_message(await collect(provider, make_request()))
        await provider.aclose()
    assert message.text == "through the proxy"
    assert proxy.forwarded == [f"{base_url}/chat/completions"]


# -- request heads that cannot be sent -----------------------------------------------------------------


@pytest.mark.parametrize("value", ["Bearer k\r\nx-injected: 1", "Bearer k\n", "a\x00b", "\u2603 snowman"])
async def test_a_header_value_that_cannot_be_sent_is_an_invalid_request(value: str) -> None:
    async with ScriptedServer() as server:
        client = HttpClient(env={})
        with pytest.raises(InvalidRequest, match="'authorization'") as caught:
            await fetch(client, f"http://127.0.0.1:{server.port}/", {"authorization": value})
        await client.aclose()
    assert "Bearer" not in str(caught.value) and "snowman" not in str(caught.value), "never the value"
    assert server.connections == 0


async def test_a_provider_with_a_broken_header_fails_once_with_a_bad_request(
    fake_server: FakeModelServer,
) -> None:
    """A header from the configuration holding a line break: one clear error, not retried, nothing sent."""
    provider = OpenAIProvider(api_key="k", base_url=fake_server.openai_base_url, headers={"x-team": "a\nb"})
    with pytest.raises(BadRequest, match=r"cannot send the request.*'x-team'.*not retried"):
        await collect(provider, make_request())
    await provider.aclose()
    assert fake_server.requests == []


def test_the_ca_bundle_is_read_once_per_choice(authority: Authority, tmp_path: Path) -> None:
    from ink.ai.http1 import default_tls_context

    env = {"SSL_CERT_FILE": str(authority.ca_file)}
    assert default_tls_context(env) is default_tls_context(dict(env))
    assert default_tls_context({}) is not default_tls_context(env)


async def test_a_proxy_url_with_a_bad_port_is_an_invalid_request_not_a_crash() -> None:
    client = HttpClient(env={"HTTPS_PROXY": "http://proxy.corp:99999"})
    with pytest.raises(InvalidRequest, match="no valid host and port"):
        await fetch(client, "https://api.example.org/")


def test_response_headers_are_case_insensitive_and_retry_after_reads_every_form() -> None:
    """The headers ``error_from_response`` reads: ``retry-after-ms``, seconds, or an HTTP date."""
    import email.utils
    import time

    from ink.ai.http1 import Headers
    from ink.ai.http_errors import parse_retry_after

    headers = Headers([(b"retry-after", b"7"), (b"x-many", b"a"), (b"x-many", b"b")])
    assert headers.get("Retry-After") == "7" and headers["X-MANY"] == "a, b" and "x-none" not in headers
    assert parse_retry_after(headers) == 7.0
    assert parse_retry_after(Headers([(b"retry-after-ms", b"250"), (b"retry-after", b"9")])) == 0.25
    later = email.utils.formatdate(time.time() + 30, usegmt=True).encode()
    waited = parse_retry_after(Headers([(b"retry-after", later)]))
    assert waited is not None and 25 < waited <= 30
    assert parse_retry_after(Headers([(b"retry-after", b"soon")])) is None


async def test_a_server_that_stops_reading_hits_the_write_timeout() -> None:
    """The server takes the connection and never reads: once the socket buffers are full, sending the
    rest of a large body waits, and the write timeout ends it with a ``Timeout``, not a hang."""
    stalled = asyncio.Event()

    async def never_read(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await stalled.wait()
        writer.close()

    server = await asyncio.start_server(never_read, "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    client = HttpClient(env={}, write_timeout=0.3)
    sent: list[bool] = []
    with pytest.raises(Timeout, match=r"sending the request took longer than 0\.3 s"):
        url, body = f"http://127.0.0.1:{port}/", bytes(32 << 20)
        await client.send("POST", url, headers={}, content=body, on_sent=lambda: sent.append(True))
    assert sent == [], "the first-byte clock never started: the request was not out"
    stalled.set()
    await client.aclose()
    server.close()
    await server.wait_closed()


async def test_a_connection_that_is_never_accepted_hits_the_connect_timeout() -> None:
    """A listener whose queue is full (nothing accepts): the kernel drops the handshake, connecting waits,
    and the connect timeout ends it, naming the limit."""
    import socket

    with socket.socket() as listener:
        listener.bind(("127.0.0.1", 0))
        listener.listen(0)
        address = listener.getsockname()
        fillers = []
        for _ in range(4):  # more than the queue holds
            filler = socket.socket()
            filler.setblocking(False)
            filler.connect_ex(address)
            fillers.append(filler)
        try:
            client = HttpClient(env={}, connect_timeout=0.5)
            connecting = r"connecting to 127\.0\.0\.1:\d+ took longer than 0\.5 s"
            async with asyncio.timeout(10):  # were it accepted, the answer would never come: fail, not hang
                with pytest.raises(Timeout, match=connecting):
                    await fetch(client, f"http://127.0.0.1:{address[1]}/")
        finally:
            for filler in fillers:
                filler.close()


async def test_an_error_answer_whose_body_never_ends_is_read_only_to_its_limit() -> None:
    """A hostile server answers 500 and streams its body without end: the provider reads the first
    ``MAX_ERROR_BODY`` bytes, closes the connection and raises the mapped error at once, instead of
    holding everything that arrives until the first-byte deadline (hundreds of MB a second on
    loopback)."""
    from ink.ai.errors import ServerError
    from ink.ai.http import MAX_ERROR_BODY, NO_RETRY

    ceiling = 64 * MAX_ERROR_BODY  # where the server gives up when nobody stops reading
    sent = 0

    async def endless_error(request: Received, writer: asyncio.StreamWriter) -> bool:
        nonlocal sent
        writer.write(b"HTTP/1.1 500 Internal Server Error\r\ncontent-type: text/plain\r\n\r\nbroken ")
        try:
            while sent < ceiling:
                writer.write(b"x" * 65536)
                sent += 65536
                await writer.drain()
        except ConnectionError:
            pass
        return False

    async with ScriptedServer(endless_error) as server:
        provider = OpenAIProvider(api_key="k", base_url=f"http://127.0.0.1:{server.port}/v1", retry=NO_RETRY)
        with pytest.raises(ServerError, match="broken x") as caught:
            async with asyncio.timeout(30):
                await collect(provider, make_request())
        await server.closed.wait()
        await provider.aclose()
    assert caught.value.status == 500
    assert sent < ceiling / 2, "the client stopped reading near the limit and closed the connection"


async def test_a_body_the_client_does_not_read_yet_waits_in_the_kernel_not_in_memory() -> None:
    """The server pushes a large body while the client, having the head, reads nothing: the connection
    holds at most about ``HIGH_WATER`` bytes unread, and one read more (the transport stops reading the
    socket, and the server's writes block); reading later gets the whole body, the transport reading again."""
    from ink.ai.http1.wire import HIGH_WATER

    size = 32 << 20
    blocked = asyncio.Event()

    async def flood(request: Received, writer: asyncio.StreamWriter) -> bool:
        writer.write(b"HTTP/1.1 200 OK\r\ncontent-length: %d\r\n\r\n" % size)
        piece = bytes(1 << 16)
        for _ in range(size // len(piece)):
            writer.write(piece)
            try:
                await asyncio.wait_for(writer.drain(), 2)
            except TimeoutError:  # the client's socket buffer is full: it stopped reading
                blocked.set()
                await writer.drain()
        return True

    async with ScriptedServer(flood) as server:
        client = HttpClient(env={})
        response = await client.send("POST", f"http://127.0.0.1:{server.port}/", headers={})
        await asyncio.wait_for(blocked.wait(), 60)
        connection = response._connection
        assert connection is not None and connection.wire.pending <= HIGH_WATER + (256 << 10)
        assert len(await response.read()) == size
        response.close()
        await client.aclose()
