"""Shared HTTP machinery of the providers: client factory, retry policy, and the SSE request loop.

``stream_sse`` sends one streaming request and yields its server-sent events; a provider parses them
into stream events (one *attempt*). ``with_retries`` runs attempts: a failure *before the first content
event* (HTTP 408/409/429/5xx, connection errors, an error event opening a 200 stream) is retried with
exponential backoff and jitter, honouring ``retry-after``; each retry is announced by yielding
``RetryScheduled`` first. Once content has been yielded nothing is retried: the consumer has shown it.

Cancellation: the response lives in ``async with client.stream(...)``, so cancelling the consumer (the
abort) or any error closes the connection before the exception leaves this module.
"""

from __future__ import annotations

import asyncio
import random
from collections.abc import AsyncGenerator, Callable, Mapping
from contextlib import aclosing
from dataclasses import dataclass
from typing import Any

import httpx
from httpx_sse import EventSource, ServerSentEvent, SSEError

from ink.ai.errors import BadResponse, ProviderError, RateLimited
from ink.ai.http_errors import error_from_response, error_from_transport
from ink.ai.provider import ModelRequest
from ink.ai.stream import ReplyDone, RetryScheduled, StreamEvent, TextDelta, ThinkingDelta, ToolCallReady

RETRY_STATUSES = frozenset({408, 409, 429})
DEFAULT_TIMEOUT = httpx.Timeout(connect=15.0, read=600.0, write=60.0, pool=30.0)


@dataclass(frozen=True, slots=True)
class RetryPolicy:
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


def new_client(
    base_url: str, transport: httpx.AsyncBaseTransport | None = None, timeout: httpx.Timeout | None = None
) -> httpx.AsyncClient:
    """A client for one provider. Whoever creates it closes it (``aclose``).

    For a plain-http base URL (a local server) the CA bundle is not loaded: no TLS is used and
    redirects are not followed, so certificates never matter, and start-up saves ~30 ms."""
    secure = not base_url.startswith("http://")
    return httpx.AsyncClient(transport=transport, timeout=timeout or DEFAULT_TIMEOUT, verify=secure)


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


async def stream_sse(
    client: httpx.AsyncClient,
    url: str,
    *,
    headers: Mapping[str, str],
    body: Mapping[str, Any],
    provider: str,
) -> AsyncGenerator[ServerSentEvent, None]:
    """Yield the server-sent events of one streaming POST. Raises a ``ProviderError``: the mapped HTTP
    error, ``ConnectionFailed`` (also when the stream broke off), ``BadResponse`` (not an event
    stream). Leaving early (``aclose``) closes the response at once."""
    async with aclosing(_one_attempt(client, url, headers, body, provider)) as events:
        async for event in events:
            yield event


async def drain(events: AsyncGenerator[ServerSentEvent, None], limit: float = 0.5) -> None:
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
    client: httpx.AsyncClient, url: str, headers: Mapping[str, str], body: Mapping[str, Any], provider: str
) -> AsyncGenerator[ServerSentEvent, None]:
    streamed = False
    try:
        async with client.stream("POST", url, headers=dict(headers), json=body) as response:
            if response.status_code >= 400:
                await response.aread()
                raise error_from_response(response, provider)
            async for event in EventSource(response).aiter_sse():
                streamed = True
                yield event
    except httpx.HTTPError as exc:
        raise error_from_transport(exc, url, provider, streamed=streamed) from exc
    except SSEError as exc:
        raise BadResponse(f"{url} did not answer with an event stream: {exc}", provider=provider) from exc


class HttpEndpoint:
    """What every provider needs of HTTP: its base URL and retry policy, its own headers merged with the
    caller's, and a client it either borrows (``client``, closed by its owner) or creates on first use
    (from ``transport``) and closes in ``aclose``."""

    def __init__(
        self,
        base_url: str,
        *,
        client: httpx.AsyncClient | None,
        transport: httpx.AsyncBaseTransport | None,
        retry: RetryPolicy | None,
        headers: Mapping[str, str] | None,
    ) -> None:
        self.base_url = base_url
        self.retry = retry or RetryPolicy()
        self._extra_headers = dict(headers or {})
        self._client = client
        self._owns_client = client is None
        self._transport = transport

    def headers(self, own: Mapping[str, str]) -> dict[str, str]:
        """The provider's ``own`` headers; the caller's extra headers win."""
        return {**own, **self._extra_headers}

    def client(self) -> httpx.AsyncClient:
        if self._client is None:
            self._client = new_client(self.base_url, self._transport)
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
