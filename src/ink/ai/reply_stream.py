"""One streamed model reply over HTTP, the frame every provider shares: send the request, map an error
answer, parse the server-sent events, hand each event's data to the provider's ``ReplyReader``, bound the
server's silences, and, once the protocol's last event is in, read the rest of the body so the connection
can be reused. A provider only parses its protocol (``ReplyReader``).

Deadlines (``ink.ai.deadline``): the first-byte clock starts once the request is out; the idle clock moves
only when the reader says the reply grew (``progress``), so keep-alives and events without content count
as silence. A timeout after connecting raises ``Silent``, and a 200 answer whose stream holds no event at
all raises ``BadResponse``: neither is retried (the server answered; asking again would only repeat the
wait or the empty answer).

Cancellation: the response is closed in a ``finally``, so cancelling the consumer (the abort) or any error
closes its connection before the exception leaves this module.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncGenerator, AsyncIterator, Awaitable, Iterable, Mapping
from typing import Any, Protocol

from ink.ai.deadline import DEFAULT_TIMEOUTS, Deadline, RequestTimeouts
from ink.ai.errors import BadResponse
from ink.ai.http1 import HttpClient, HttpError, Response
from ink.ai.http_errors import error_from_response, error_from_transport
from ink.ai.sse import LineTooLong, SseParser
from ink.ai.stream import StreamEvent

KEEP_ALIVE_EVENTS = frozenset({"ping"})  # Anthropic's keep-alive; SSE comments never reach us as events
MAX_ERROR_BODY = 1 << 20  # bytes of an error answer read: its message is at the start; the rest may not end
DRAIN_SECONDS = 0.5  # reading past the last event, for the connection's reuse


class ReplyReader(Protocol):
    """One protocol's events made stream events. ``progress`` counts what the reply gained (text,
    thinking, a signature, a tool call's name or arguments, a whole call, usage, a stop reason): only a
    change of it moves the idle deadline. ``complete``: the protocol's last event has arrived."""

    progress: int
    complete: bool

    def feed(self, data: str) -> Iterable[StreamEvent]:
        """The stream events one SSE event's ``data`` makes. Raises ``ProviderError``."""
        ...

    def finish(self) -> Iterable[StreamEvent]:
        """The stream's end: the last events, ``ReplyDone`` among them. Raises ``ProviderError`` (a reply
        that ended before the protocol's last event is a ``ConnectionFailed``)."""
        ...


async def stream_reply(
    client: HttpClient,
    url: str,
    *,
    headers: Mapping[str, str],
    body: Mapping[str, Any],
    reader: ReplyReader,
    provider: str,
    timeouts: RequestTimeouts = DEFAULT_TIMEOUTS,
) -> AsyncGenerator[StreamEvent, None]:
    """POST ``body`` as JSON to ``url`` and yield what ``reader`` makes of the answer's events. Raises a
    ``ProviderError``: the mapped HTTP error, ``ConnectionFailed`` (also when the stream broke off),
    ``Silent`` (a deadline of ``timeouts`` passed), ``BadResponse`` (not an event stream, or a 200 with no
    event). Leaving early (``aclose``) closes the response at once."""
    clock = Deadline(timeouts, url, provider)
    response: Response | None = None
    streamed = False
    try:
        # as httpx sent ``json=``: compact, UTF-8, and NaN refused (no JSON parser reads it)
        content = json.dumps(body, ensure_ascii=False, separators=(",", ":"), allow_nan=False).encode()
        sending = client.send("POST", url, headers=headers, content=content, on_sent=clock.sent)
        response = await _answer(sending, clock, url, provider)
        parser = SseParser()
        chunks = response.aiter_bytes()
        seen = reader.progress
        while not reader.complete:  # one deadline per network chunk, however many events it completes
            chunk = await clock.bound(anext(chunks, None))
            for event in parser.feed(chunk) if chunk is not None else parser.close():
                if event.event in KEEP_ALIVE_EVENTS:
                    continue
                streamed = True
                for item in reader.feed(event.data):
                    yield item
                if reader.progress != seen:
                    seen = reader.progress
                    clock.restart()
                if reader.complete:
                    break
            if chunk is None:
                break
        if not streamed:
            raise BadResponse(
                f"{url} answered {response.status} with an empty event stream (no event at all); not retried",
                provider=provider,
            )
        for item in reader.finish():
            yield item
        await _drain(chunks)
    except HttpError as exc:
        raise error_from_transport(exc, url, provider, streamed=streamed) from exc
    except LineTooLong as exc:
        raise BadResponse(f"{url}: {exc}; not retried", provider=provider) from exc
    finally:
        if response is not None:
            response.close()
        clock.stop()


async def _answer(sending: Awaitable[Response], clock: Deadline, url: str, provider: str) -> Response:
    """The answer's head, once it is an event stream; an error answer raises its ``ProviderError``."""
    response = await clock.bound(sending)  # the first-byte clock starts once the request is out
    try:
        if response.status >= 400:
            await clock.bound(response.read(MAX_ERROR_BODY))
            raise error_from_response(response, provider)
        content_type = (response.headers.get("content-type") or "").partition(";")[0]
        if "text/event-stream" not in content_type:
            raise BadResponse(
                f"{url} did not answer with an event stream: its content-type is {content_type!r}",
                provider=provider,
            )
    except BaseException:
        response.close()
        raise
    return response


async def _drain(chunks: AsyncIterator[bytes]) -> None:
    """Read what follows the protocol's last event (the chunked terminator) so the connection can be
    reused for the next call instead of paying a new TLS handshake. Bounded: a server that keeps the
    stream open gets its connection closed. Failures here do not matter: the reply is complete."""
    try:
        async with asyncio.timeout(DRAIN_SECONDS):
            async for _ in chunks:
                pass
    except (TimeoutError, HttpError):
        pass
