"""Shared HTTP machinery of the providers: client factory, retry policy, endpoint, and the provider
frame every protocol fills in.

``SseProvider.stream`` runs attempts under ``with_retries``; one attempt is one streamed reply
(``ink.ai.reply_stream.stream_reply``) parsed by the provider's ``ReplyReader``. A failure *before the
first content event* (HTTP 408/409/429/5xx, connection errors, an error event opening a 200 stream) is
retried with exponential backoff and jitter, honouring ``retry-after``; each retry is announced by
yielding ``RetryScheduled`` first. Once content has been yielded nothing is retried: the consumer has
shown it. Deadlines: ``ink.ai.deadline``; the HTTP/1.1 client: ``ink.ai.http1``.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncGenerator, Callable, Mapping
from contextlib import aclosing
from typing import Any

import msgspec

from ink.ai.deadline import DEFAULT_TIMEOUTS, RequestTimeouts
from ink.ai.errors import ProviderError, RateLimited
from ink.ai.http1 import HttpClient
from ink.ai.provider import ModelRequest
from ink.ai.reply_stream import MAX_ERROR_BODY, ReplyReader, stream_reply
from ink.ai.stream import ReplyDone, RetryScheduled, StreamEvent, TextDelta, ThinkingDelta, ToolCallReady

__all__ = [  # RequestTimeouts and MAX_ERROR_BODY are read from here too
    "DEFAULT_TIMEOUTS",
    "MAX_ERROR_BODY",
    "NO_RETRY",
    "HttpEndpoint",
    "RequestTimeouts",
    "RetryPolicy",
    "SseProvider",
    "is_retryable",
    "new_client",
    "with_retries",
]

RETRY_STATUSES = frozenset({408, 409, 429})
WRITE_TIMEOUT = 60.0  # seconds to hand the request to the network


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
        import random  # here: only a retry needs it (random and its imports, ~1 ms of every start)

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
    """What every provider shares once it has an ``HttpEndpoint``: ``stream`` runs attempts under the retry
    policy, each one ``stream_reply`` of the provider's ``url``, ``_headers()`` and ``_body(request)``,
    read by a fresh ``_reader(request)`` in its own protocol."""

    name: str
    http: HttpEndpoint

    @property
    def base_url(self) -> str:
        return self.http.base_url

    @property
    def url(self) -> str:
        raise NotImplementedError

    async def aclose(self) -> None:
        await self.http.aclose()

    def stream(self, request: ModelRequest) -> AsyncGenerator[StreamEvent, None]:
        """Yields deltas, ``ToolCallReady`` and ``RetryScheduled`` events, then one ``ReplyDone``.
        Raises a ``ProviderError``; cancelling the consumer closes the connection."""
        return with_retries(lambda: self._attempt(request), self.http.retry)

    def _attempt(self, request: ModelRequest) -> AsyncGenerator[StreamEvent, None]:
        return stream_reply(
            self.http.client(),
            self.url,
            headers=self._headers(),
            body=self._body(request),
            reader=self._reader(request),
            provider=self.name,
            timeouts=self.http.timeouts,
        )

    def _headers(self) -> dict[str, str]:
        raise NotImplementedError

    def _body(self, request: ModelRequest) -> dict[str, Any]:
        raise NotImplementedError

    def _reader(self, request: ModelRequest) -> ReplyReader:
        raise NotImplementedError
