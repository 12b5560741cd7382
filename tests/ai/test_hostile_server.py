"""The HTTP client against servers that answer wrongly on purpose (issue 29, "HTTP client"), each a raw
server on 127.0.0.1 written here: bytes after a framed body (a reply smuggled into the next request's
answer), a body in a content encoding, a malformed status line or head, a bad certificate file, and
error texts holding terminal escapes."""

from __future__ import annotations

import asyncio

import pytest

from ink.ai.http1 import HttpClient
from tests.ai.wire_peers import Received, ScriptedServer


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
