"""Shared HTTP machinery of the providers: client factory, retry policy, and the SSE request loop.

``stream_sse`` sends one streaming request and yields its server-sent events; a provider parses them
into stream events (one *attempt*). ``with_retries`` runs attempts: a failure *before the first content
event* (HTTP 408/409/429/5xx, connection errors, an error event opening a 200 stream) is retried with
exponential backoff and jitter, honouring ``retry-after``; each retry is announced by yielding
``RetryScheduled`` first. Once content has been yielded nothing is retried: the consumer has shown it.

Deadlines (``RequestTimeouts``, docs/config.md): connecting is bounded by ``connect``; from having sent
the request to its first event by ``first_byte``; between events by ``idle``. SSE comments and Anthropic
``ping`` events are keep-alives: they prove the connection lives, not that the model answers, so they
count as silence. A timeout after connecting raises ``Silent``, and a 200 answer whose stream holds no
event at all raises ``BadResponse``: neither is retried (the server answered; asking again would only
repeat the wait or the empty answer).

Cancellation: the response is closed in a ``finally``, so cancelling the consumer (the abort) or any error
closes its connection before the exception leaves this module. The HTTP/1.1 client is ``ink.ai.http1``.
"""

from __future__ import annotations

import asyncio
import json
import random
from collections.abc import AsyncGenerator, Awaitable, Callable, Mapping
from contextlib import aclosing
from typing import Any, TypeVar

import msgspec

from ink.ai.errors import BadResponse, ProviderError, RateLimited, Silent
from ink.ai.http1 import HttpClient, HttpError, Response
from ink.ai.http_errors import error_from_response, error_from_transport
from ink.ai.provider import ModelRequest
from ink.ai.sse import LineTooLong, SseParser
from ink.ai.stream import ReplyDone, RetryScheduled, StreamEvent, TextDelta, ThinkingDelta, ToolCallReady

T = TypeVar("T")
RETRY_STATUSES = frozenset({408, 409, 429})
KEEP_ALIVE_EVENTS = frozenset({"ping"})  # Anthropic's keep-alive; SSE comments never reach us as events
WRITE_TIMEOUT = 60.0  # seconds to hand the request to the network
MAX_ERROR_BODY = 1 << 20  # bytes of an error answer read: its message is at the start; the rest may not end


class RequestTimeouts(msgspec.Struct, frozen=True):
    """Seconds. ``connect``: to open the connection; ``first_byte``: from sending the request to its first
    event; ``idle``: between two events. Keep-alives do not count as events."""

    connect: float = 15.0
    first_byte: float = 300.0
    idle: float = 300.0


DEFAULT_TIMEOUTS = RequestTimeouts()


class RetryPolicy(msgspec.Struct, frozen=True):
    """``max_attempts`` counts the first try. A ``retry-after`` longer than ``max_retry_after`` is not
    waited for: the error is raised with its ``retry_after`` for the caller to show."""

    max_attempts: int = 4
    base_delay: float = 1.0
    max_delay: float = 30.0
    max_retry_after: float = 60.0
    jitter: float = 0.25

    def delay(self, attempt: int, error: ProviderError) -> float | None:
        """Seconds to wait before try ``attempt + 1`` after ``error`` on try ``attempt``; None: give up."""
        if attempt >= self.max_attempts or not is_retryable(error):
            return None
        retry_after = error.retry_after if isinstance(error, RateLimited) else None
        if retry_after is not None:
            return retry_after if retry_after <= self.max_retry_after else None
        backoff = min(self.max_delay, self.base_delay * 2.0 ** (attempt - 1))
        return backoff * (1 - self.jitter * random.random())


NO_RETRY = RetryPolicy(max_attempts=1)


def is_retryable(error: ProviderError) -> bool:
    if error.retryable:
        return True
    status = error.status
    return status is not None and (status in RETRY_STATUSES or status >= 500)


def new_client(timeouts: RequestTimeouts | None = None) -> HttpClient:
    """A client for one provider (or several: it pools per origin). Whoever creates it closes it
    (``aclose``). Reading is bounded by the deadlines of ``stream_sse``, not by the client; the CA bundle
    is loaded only for the first https connection, so a local server never pays for it."""
    return HttpClient(connect_timeout=(timeouts or DEFAULT_TIMEOUTS).connect, write_timeout=WRITE_TIMEOUT)


Attempt = Callable[[], AsyncGenerator[StreamEvent, None]]
_CONTENT = (TextDelta, ThinkingDelta, ToolCallReady, ReplyDone)


async def with_retries(attempt: Attempt, policy: RetryPolicy) -> AsyncGenerator[StreamEvent, None]:
    """Run ``attempt`` (one request, streamed and parsed), retrying a failure that comes before its first
    content event: an HTTP error, a refused connection, or an error event that a 200 stream opened with
    (Anthropic's ``overloaded_error``). Once text, thinking or a tool call has streamed, a failure is
    raised as it is: the consumer already showed it. Each retry is announced with ``RetryScheduled``.
    Never swallows ``CancelledError``."""
    number = 0
    while True:
        number += 1
        started = False
        try:
            async with aclosing(attempt()) as events:
                async for event in events:
                    started = started or isinstance(event, _CONTENT)
                    yield event
            return
        except ProviderError as error:
            delay = None if started else policy.delay(number, error)
            if delay is None:
                raise
            reason = str(error)
        yield RetryScheduled(number, delay, reason)
        await asyncio.sleep(delay)


def stream_sse(
    client: HttpClient,
    url: str,
    *,
    headers: Mapping[str, str],
    body: Mapping[str, Any],
    provider: str,
    timeouts: RequestTimeouts = DEFAULT_TIMEOUTS,
) -> AsyncGenerator[str, None]:
    """Yield the data of each server-sent event of one streaming POST, keep-alives left out. Raises a
    ``ProviderError``: the mapped HTTP error, ``ConnectionFailed`` (also when the stream broke off),
    ``Silent`` (a deadline of ``timeouts`` passed), ``BadResponse`` (not an event stream, or a 200 with
    no event). Leaving early (``aclose``) closes the response at once."""
    return _one_attempt(client, url, headers, body, provider, timeouts)


async def drain(events: AsyncGenerator[str, None], limit: float = 0.5) -> None:
    """Read what follows the protocol's last event (the chunked terminator) so the connection can be
    reused for the next call instead of paying a new TLS handshake. Bounded: a server that keeps the
    stream open gets its connection closed. Failures here do not matter: the reply is complete."""
    try:
        async with asyncio.timeout(limit):
            async for _ in events:
                pass
    except (TimeoutError, ProviderError):
        pass


async def _one_attempt(
    client: HttpClient,
    url: str,
    headers: Mapping[str, str],
    body: Mapping[str, Any],
    provider: str,
    timeouts: RequestTimeouts,
) -> AsyncGenerator[str, None]:
    clock = _Deadline(timeouts, url, provider)
    streamed = False
    response: Response | None = None
    try:
        # as httpx sent ``json=``: compact, UTF-8, and NaN refused (no JSON parser reads it)
        content = json.dumps(body, ensure_ascii=False, separators=(",", ":"), allow_nan=False).encode()
        sending = client.send("POST", url, headers=headers, content=content, on_sent=clock.sent)
        response = await clock.bound(sending)  # the first-byte clock starts once the request is out
        if response.status >= 400:
            await clock.bound(response.read(MAX_ERROR_BODY))
            raise error_from_response(response, provider)
        content_type = (response.headers.get("content-type") or "").partition(";")[0]
        if "text/event-stream" not in content_type:
            raise BadResponse(
                f"{url} did not answer with an event stream: its content-type is {content_type!r}",
                provider=provider,
            )
        parser = SseParser()
        chunks = response.aiter_bytes()
        while True:  # one deadline per network chunk, however many events it completes
            chunk = await clock.bound(anext(chunks, None))
            for event in parser.feed(chunk) if chunk is not None else parser.close():
                if event.event in KEEP_ALIVE_EVENTS:
                    continue
                streamed = True
                yield event.data
                clock.restart()
            if chunk is None:
                break
        if not streamed:
            raise BadResponse(
                f"{url} answered {response.status} with an empty event stream (no event at all); not retried",
                provider=provider,
            )
    except HttpError as exc:
        raise error_from_transport(exc, url, provider, streamed=streamed) from exc
    except LineTooLong as exc:
        raise BadResponse(f"{url}: {exc}; not retried", provider=provider) from exc
    finally:
        if response is not None:
            response.close()
        clock.stop()


class _Deadline:
    """The time by which the server must say something: ``first_byte`` after the request was sent (the
    connection and the upload are bounded by the client's own connect and write timeouts), then ``idle`` after
    each event, counted from when the consumer asks for the next one, so its own pauses are not the
    server's silence. ``bound`` runs one await under it and raises ``Silent`` when it passes; the deadline
    never runs out while the generator is suspended at a ``yield``.

    A reply streams thousands of events: moving a timer for each (``asyncio.timeout``: a new timer handle
    per enter and per move, ~10 us) costs more than parsing the event. So ``restart`` only moves ``at``;
    one watchdog timer, armed while something is awaited, looks at ``at`` when it fires and either sleeps
    on until it or cancels the waiting task, as ``asyncio.timeout`` would; it is moved only when ``at``
    comes earlier than it (``idle`` shorter than ``first_byte``) (a cancellation of its own is
    told from one from outside by the task's cancel count, and only its own becomes ``Silent``)."""

    def __init__(self, timeouts: RequestTimeouts, url: str, provider: str) -> None:
        self.timeouts, self.url, self.provider = timeouts, url, provider
        self.first = True
        self.at: float | None = None  # none yet: the request is still being sent
        self._loop = asyncio.get_running_loop()
        self._now = self._loop.time  # read once per event
        self._timer: asyncio.TimerHandle | None = None  # fires at ``_timer_at``, at or before ``at``
        self._timer_at = 0.0
        self._waiting: asyncio.Task[Any] | None = None  # the task in ``bound``, while it awaits
        self._expired = False

    def sent(self) -> None:
        """The request is out (the client calls this once its body is handed to the network)."""
        if self.at is None:
            self._set(self.timeouts.first_byte)

    def restart(self) -> None:
        self.first = False
        self._set(self.timeouts.idle)

    def _set(self, seconds: float) -> None:
        self.at = self._now() + seconds
        if self._timer is not None and self._timer_at > self.at:  # ``idle`` may be the shorter one
            self.stop()
        if self._waiting is not None and self._timer is None:  # set while awaiting (``sent``)
            self._arm(self.at)

    def _arm(self, when: float) -> None:
        self._timer, self._timer_at = self._loop.call_at(when, self._check), when

    def stop(self) -> None:
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None

    def _check(self) -> None:
        self._timer = None
        if self._waiting is None or self.at is None:
            return  # not awaiting the server: the next ``bound`` arms the timer again
        if self._loop.time() < self.at:  # the deadline moved on since the timer was set
            self._arm(self.at)
            return
        self._expired = True
        self._waiting.cancel()

    async def bound(self, awaitable: Awaitable[T]) -> T:
        task = asyncio.current_task(self._loop)
        assert task is not None
        cancelling = task.cancelling()
        self._waiting = task
        if self._timer is None and self.at is not None:
            self._arm(self.at)
        try:
            return await awaitable
        except asyncio.CancelledError:
            if self._expired:
                self._expired = False
                if task.uncancel() <= cancelling:  # no cancel from outside came as well
                    raise self._silent() from None
            raise
        finally:
            self._waiting = None
            if self._expired:  # it ran out as the await ended anyway: take back the cancel it sent
                self._expired = False
                task.uncancel()

    def _silent(self) -> Silent:
        if self.first:
            what = f"no answer from {self.url} within first_byte_timeout = {self.timeouts.first_byte:g} s"
        else:
            what = f"{self.url} went silent mid-reply for idle_timeout = {self.timeouts.idle:g} s"
        return Silent(f"{what} (keep-alives count as silence); not retried", provider=self.provider)


class HttpEndpoint:
    """What every provider needs of HTTP: its base URL, retry policy and timeouts, its own headers merged
    with the caller's, and a client it either borrows (``client``, closed by its owner) or creates on
    first use and closes in ``aclose``."""

    def __init__(
        self,
        base_url: str,
        *,
        client: HttpClient | None,
        retry: RetryPolicy | None,
        headers: Mapping[str, str] | None,
        timeouts: RequestTimeouts | None = None,
    ) -> None:
        self.base_url = base_url
        self.retry = retry or RetryPolicy()
        self.timeouts = timeouts or DEFAULT_TIMEOUTS
        self._extra_headers = dict(headers or {})
        self._client = client
        self._owns_client = client is None

    def headers(self, own: Mapping[str, str]) -> dict[str, str]:
        """The provider's ``own`` headers; the caller's extra headers win."""
        return {**own, **self._extra_headers}

    def client(self) -> HttpClient:
        if self._client is None:
            self._client = new_client(self.timeouts)
        return self._client

    async def aclose(self) -> None:
        if self._owns_client and self._client is not None:
            await self._client.aclose()
            self._client = None


class SseProvider:
    """What both providers share once they have an ``HttpEndpoint``: ``stream`` runs attempts under the
    retry policy; a subclass parses one attempt (``_attempt``) in its own protocol."""

    name: str
    http: HttpEndpoint

    @property
    def base_url(self) -> str:
        return self.http.base_url

    async def aclose(self) -> None:
        await self.http.aclose()

    def stream(self, request: ModelRequest) -> AsyncGenerator[StreamEvent, None]:
        """Yields deltas, ``ToolCallReady`` and ``RetryScheduled`` events, then one ``ReplyDone``.
        Raises a ``ProviderError``; cancelling the consumer closes the connection."""
        return with_retries(lambda: self._attempt(request), self.http.retry)

    def _attempt(self, request: ModelRequest) -> AsyncGenerator[StreamEvent, None]:
        raise NotImplementedError
