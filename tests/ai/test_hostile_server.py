"""The HTTP client against servers that answer wrongly on purpose (issue 29, "HTTP client"), each a raw
server on 127.0.0.1 written here: bytes after a framed body (a reply smuggled into the next request's
answer), a body in a content encoding, a malformed status line or head, a bad certificate file, and
error texts holding terminal escapes."""

from __future__ import annotations

import asyncio
import gzip
import itertools
import os
import unicodedata
import zlib
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ink.ai.errors import AuthError, BadResponse, ProviderError, TlsFailed
from ink.ai.http import RetryPolicy
from ink.ai.http1 import ConnectError, HttpClient, MalformedResponse, TrustStoreError, default_tls_context
from ink.ai.http1.encoding import PIECE, Decoder
from ink.ai.openai import OpenAIProvider
from ink.ai.printable import printable
from ink.ai.stream import RetryScheduled, StreamEvent
from tests.ai.helpers import done_message, make_request
from tests.ai.wire_peers import Answer, CountingProxy, Received, ScriptedServer


async def fetch(client: HttpClient, url: str) -> tuple[int, bytes]:
    response = await client.send("POST", url, headers={}, content=b"{}")
    try:
        return response.status, await response.read()
    finally:
        response.close()


def answer(body: bytes) -> bytes:
    return b"HTTP/1.1 200 OK\r\ncontent-length: %d\r\n\r\n%s" % (len(body), body)


SMUGGLED = answer(b"smuggled")


@pytest.mark.parametrize(
    "first",
    [
        answer(b"ok"),
        # the answer ends exactly where one read of 64 KiB would: the rest waits past h11, unread
        answer(b"x" * (65536 - len(answer(b"")) - len(b"65536") + 1)),
    ],
    ids=["small", "ends-at-a-read-boundary"],
)
async def test_bytes_after_a_framed_body_never_answer_the_next_request(first: bytes) -> None:
    """The server writes its answer and, in the same breath, a second one nobody asked for. Pooled, that
    connection would hand the second to the next request as its answer; it is closed instead, and the
    next request gets its own answer on a new connection."""

    assert len(first) in (len(answer(b"ok")), 65536)

    async def smuggle(request: Received, writer: asyncio.StreamWriter) -> bool:
        if request.connection == 0:
            writer.write(first + SMUGGLED)
        else:
            writer.write(answer(b"real"))
        await writer.drain()
        return True

    async with ScriptedServer(smuggle) as server:
        client = HttpClient(env={})
        url = f"http://127.0.0.1:{server.port}/"
        status, body = await fetch(client, url)
        assert status == 200 and body == first.partition(b"\r\n\r\n")[2]
        assert await fetch(client, url) == (200, b"real")
        await client.aclose()
    assert server.connections == 2


async def test_bytes_arriving_after_the_answer_was_read_close_the_idle_connection() -> None:
    """The extra answer comes a moment later, while the connection waits in the pool."""
    written = asyncio.Event()

    async def smuggle_later(request: Received, writer: asyncio.StreamWriter) -> bool:
        writer.write(answer(b"ok") if request.connection == 0 else answer(b"real"))
        await writer.drain()
        if request.connection == 0:
            await asyncio.sleep(0)
            writer.write(SMUGGLED)
            await writer.drain()
            written.set()
        return True

    async with ScriptedServer(smuggle_later) as server:
        client = HttpClient(env={})
        url = f"http://127.0.0.1:{server.port}/"
        assert await fetch(client, url) == (200, b"ok")
        await written.wait()  # loopback: the bytes are on the client's side once the server wrote them
        assert await fetch(client, url) == (200, b"real")
        await client.aclose()


# -- a malformed answer is not asked for again --------------------------------------------------------


def provider_at(port: int) -> OpenAIProvider:
    retry = RetryPolicy(max_attempts=4, base_delay=0.001, jitter=0.0)
    return OpenAIProvider(api_key="k", base_url=f"http://127.0.0.1:{port}/v1", retry=retry)


async def failure(provider: OpenAIProvider) -> tuple[Exception, list[StreamEvent]]:
    seen: list[StreamEvent] = []
    try:
        async for event in provider.stream(make_request()):
            seen.append(event)
    except Exception as exc:
        return exc, seen
    finally:
        await provider.aclose()
    raise AssertionError("the reply ended without an error")


@pytest.mark.parametrize(
    "head",
    [
        b"HTTP/1.1 abc OK\r\ncontent-length: 0\r\n\r\n",
        b"HTTP/1.1 200 OK\r\nx-huge: " + b"a" * 65536,  # and the head goes on
        b"SSH-2.0-OpenSSH_9.6\r\n\r\n",
    ],
    ids=["invalid-status-line", "64-KiB-header", "not-http"],
)
async def test_a_malformed_answer_is_a_bad_response_and_not_retried(head: bytes) -> None:
    async def malformed(request: Received, writer: asyncio.StreamWriter) -> bool:
        writer.write(head)
        await writer.drain()
        return True  # the connection stays open: the client is the one to give up

    async with ScriptedServer(malformed) as server:
        error, seen = await failure(provider_at(server.port))
    assert isinstance(error, BadResponse), error
    assert "not valid HTTP/1.1" in str(error) and "not retried" in str(error)
    assert not any(isinstance(e, RetryScheduled) for e in seen)
    assert len(server.requests) == 1


# -- error lines never carry a terminal escape ----------------------------------------------------------

ESCAPES = ("\x1b", "\x07", "\x9b", "\r", "\u202e")


@pytest.mark.parametrize(
    "status_line, body",
    [
        (b"HTTP/1.1 500 \x1b]0;owned\x07Oops", b"\x1b[2Jthe disk is \x9b31mfull\r\n\xe2\x80\xaeok"),
        (b"HTTP/1.1 503 \x1b]0;owned\x07Busy\x1b[2J", b""),
        (b"HTTP/1.1 400 Bad", b'{"error": {"message": "bad \\u001b[2J\\u001b]0;t\\u0007 input"}}'),
    ],
    ids=["text-body", "reason-phrase", "json-message"],
)
async def test_an_error_answer_is_shown_with_its_control_characters_escaped(
    status_line: bytes, body: bytes
) -> None:
    async def hostile(request: Received, writer: asyncio.StreamWriter) -> bool:
        writer.write(status_line + b"\r\ncontent-length: %d\r\n\r\n%s" % (len(body), body))
        await writer.drain()
        return False

    async with ScriptedServer(hostile) as server:
        error, seen = await failure(provider_at(server.port))
    assert isinstance(error, ProviderError)
    shown = [str(error), *(e.error for e in seen if isinstance(e, RetryScheduled))]
    for line in shown:
        assert not any(char in line for char in ESCAPES), repr(line)
    assert "\\x1b" in str(error)  # escaped, not dropped: the user sees what the server sent


async def test_a_proxys_reason_phrase_is_shown_escaped() -> None:
    async with CountingProxy(refuse="403 \x1b]0;owned\x07Forbidden") as proxy:
        client = HttpClient(env={"ALL_PROXY": proxy.url})
        with pytest.raises(ConnectError, match="refused the tunnel") as caught:
            await fetch(client, "https://model.test/")
        await client.aclose()
    assert "\x1b" not in str(caught.value) and "\\x1b]0;owned\\x07Forbidden" in str(caught.value)


@given(st.text())
def test_printable_leaves_no_control_character_and_keeps_the_rest(text: str) -> None:
    shown = printable(text)
    assert not any(unicodedata.category(c) == "Cc" or c in "\u2028\u2029" or _bidi(c) for c in shown)
    if all(c.isprintable() or c == " " for c in text):
        assert shown == text or any(_bidi(c) for c in text)
    assert printable(shown) == shown
    assert str(BadResponse(text, provider="p")) == f"p BadResponse: {shown}"


def _bidi(char: str) -> bool:
    return "\u202a" <= char <= "\u202e" or "\u2066" <= char <= "\u2069"


# -- a body in a content encoding ----------------------------------------------------------------------

EVENTS = (
    b'data: {"choices":[{"index":0,"delta":{"content":"hello "},"finish_reason":null}]}\n\n'
    b'data: {"choices":[{"index":0,"delta":{"content":"there"},"finish_reason":null}]}\n\n'
    b'data: {"choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}\n\n'
    b"data: [DONE]\n\n"
)


def deflated(data: bytes, wbits: int) -> bytes:
    packer = zlib.compressobj(wbits=wbits)
    return packer.compress(data) + packer.flush()


def encoded_answer(status: bytes, encoding: bytes, body: bytes, content_type: bytes) -> Answer:
    async def send(request: Received, writer: asyncio.StreamWriter) -> bool:
        head = b"HTTP/1.1 %s\r\ncontent-type: %s\r\ncontent-encoding: %s\r\ncontent-length: %d\r\n\r\n"
        raw = head % (status, content_type, encoding, len(body)) + body
        for start in range(0, len(raw), 7):  # in small writes: the decoder meets every cut
            writer.write(raw[start : start + 7])
            await writer.drain()
        return True

    return send


@pytest.mark.parametrize(
    "encoding, body",
    [
        (b"gzip", gzip.compress(EVENTS)),
        (b"x-gzip", gzip.compress(EVENTS[:50]) + gzip.compress(EVENTS[50:])),  # two gzip members
        (b"deflate", deflated(EVENTS, zlib.MAX_WBITS)),
        (b"deflate", deflated(EVENTS, -zlib.MAX_WBITS)),  # raw deflate, without zlib's wrapper
        (b"identity, gzip", gzip.compress(EVENTS)),
    ],
    ids=["gzip", "gzip-members", "deflate", "raw-deflate", "identity-then-gzip"],
)
async def test_an_encoded_event_stream_is_decoded(encoding: bytes, body: bytes) -> None:
    """ink asks for identity; a server that compresses anyway is read, not taken for an empty stream."""
    answer = encoded_answer(b"200 OK", encoding, body, b"text/event-stream")
    async with ScriptedServer(answer) as server:
        provider = provider_at(server.port)
        events = [event async for event in provider.stream(make_request())]
        await provider.aclose()
    assert done_message(events).text == "hello there"


async def test_an_encoded_error_body_is_read_for_its_message() -> None:
    body = gzip.compress(b'{"error": {"message": "the key is not valid", "type": "invalid_api_key"}}')
    answer = encoded_answer(b"401 Unauthorized", b"gzip", body, b"application/json")
    async with ScriptedServer(answer) as server:
        error, _ = await failure(provider_at(server.port))
    assert isinstance(error, AuthError) and "the key is not valid" in str(error)


@pytest.mark.parametrize(
    "encoding, body, says",
    [
        (b"br", b"\x1b\x03\x00", "content-encoding 'br', which ink does not decode"),
        (b"gzip, gzip", gzip.compress(gzip.compress(EVENTS)), "content-encoding 'gzip, gzip'"),
        (b"gzip", gzip.compress(EVENTS)[:-12], "gzip body ended before its end"),
        (b"gzip", b"not gzip at all", "gzip body does not decode"),
    ],
    ids=["brotli", "twice", "cut-short", "not-gzip"],
)
async def test_an_encoding_that_is_not_decoded_is_a_bad_response_naming_it(
    encoding: bytes, body: bytes, says: str
) -> None:
    answer = encoded_answer(b"200 OK", encoding, body, b"text/event-stream")
    async with ScriptedServer(answer) as server:
        error, seen = await failure(provider_at(server.port))
    assert isinstance(error, BadResponse) and says in str(error) and "not retried" in str(error), error
    assert len(server.requests) == 1 and not any(isinstance(e, RetryScheduled) for e in seen)


@settings(max_examples=60, deadline=None)
@given(body=st.binary(max_size=5000), cuts=st.lists(st.integers(0, 6000), max_size=10), gz=st.booleans())
def test_a_decoder_gives_the_body_back_however_it_is_cut(body: bytes, cuts: list[int], gz: bool) -> None:
    encoded = gzip.compress(body) if gz else deflated(body, zlib.MAX_WBITS)
    decoder = Decoder("gzip" if gz else "deflate")
    bounds = [0, *sorted(c for c in cuts if c < len(encoded)), len(encoded)]
    out = b"".join(p for a, b in itertools.pairwise(bounds) for p in decoder.feed(encoded[a:b]))
    assert out + b"".join(decoder.finish()) == body


def test_bytes_past_the_end_of_a_deflate_body_are_refused() -> None:
    decoder = Decoder("deflate")
    with pytest.raises(MalformedResponse, match="deflate body goes on past its end"):
        list(decoder.feed(deflated(b"body", zlib.MAX_WBITS) + b"more"))


def test_a_decoder_hands_a_bomb_on_in_bounded_pieces() -> None:
    """64 MiB of zeros gzip to ~64 KB: decoded in pieces of at most ``PIECE`` bytes, never at once."""
    decoder = Decoder("gzip")
    sizes = [len(p) for p in decoder.feed(gzip.compress(bytes(64 << 20)))]
    assert max(sizes) <= PIECE and sum(sizes) + sum(len(p) for p in decoder.finish()) == 64 << 20


# -- the trusted certificates named by the environment ---------------------------------------------------


@pytest.mark.parametrize("kind", ["missing", "folder", "fifo", "no-certificates"])
async def test_a_certificate_file_that_cannot_be_used_is_named_once_and_not_retried(
    kind: str, tmp_path: Path
) -> None:
    path = tmp_path / "ca.pem"
    if kind == "folder":
        path.mkdir()
    elif kind == "fifo":
        os.mkfifo(path)  # reading it would wait for a writer forever
    elif kind == "no-certificates":
        path.write_text("not a certificate\n")
    async with ScriptedServer() as server:  # never reached: the trust store fails first
        retry = RetryPolicy(max_attempts=4, base_delay=0.001, jitter=0.0)
        base = f"https://127.0.0.1:{server.port}/v1"
        client = HttpClient(env={"SSL_CERT_FILE": str(path)})
        provider = OpenAIProvider(api_key="k", base_url=base, retry=retry, client=client)
        async with asyncio.timeout(30):
            error, seen = await failure(provider)
        await client.aclose()
    assert isinstance(error, TlsFailed), error
    text = str(error)
    assert text.count(str(path)) == 1 and text.startswith(f"openai TlsFailed: SSL_CERT_FILE names '{path}'")
    assert "127.0.0.1" not in text and "not retried" in text
    assert not any(isinstance(e, RetryScheduled) for e in seen) and server.connections == 0


def test_a_certificate_folder_that_is_not_one_is_named(tmp_path: Path) -> None:
    with pytest.raises(TrustStoreError, match=r"SSL_CERT_DIR names '.*nowhere', which cannot be used"):
        default_tls_context({"SSL_CERT_DIR": str(tmp_path / "nowhere")})
    (tmp_path / "file").write_text("x")
    with pytest.raises(TrustStoreError, match="is not a folder of certificates"):
        default_tls_context({"SSL_CERT_DIR": str(tmp_path / "file")})
