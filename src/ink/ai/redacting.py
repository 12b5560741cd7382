"""A provider wrapper that keeps secrets out of what a failing model call reports (the rules of what a
secret looks like are ``ink.redaction``'s).

A server's error body may quote the key it was sent, and a transport error may carry a URL with a
password in it; those texts become run errors, retry notices, session entries and log lines. Wrapping the
provider redacts them once, where they enter ink (the ``ProviderError``'s message and its causes, the
``retry`` text and a cut-off reply's error), instead of at every place that shows them.
"""

from __future__ import annotations

from collections.abc import AsyncGenerator, Sequence
from contextlib import aclosing
from typing import Any

import msgspec

from ink.ai.errors import ProviderError
from ink.ai.provider import ModelRequest, Provider
from ink.ai.stream import ReplyDone, RetryScheduled, StreamEvent
from ink.redaction import Redactor


class RedactingProvider:
    """Streams exactly what ``inner`` streams; only error texts change. ``aclose`` closes ``inner``."""

    def __init__(self, inner: Provider, secrets: Sequence[str | None]) -> None:
        self.inner = inner
        self.name = inner.name
        self.redact = Redactor(secrets)

    async def stream(self, request: ModelRequest) -> AsyncGenerator[StreamEvent, None]:
        """Raises what ``inner`` raises, redacted. Closing or cancelling this stream closes ``inner``'s."""
        events: Any = self.inner.stream(request)
        try:
            async with aclosing(events):
                async for event in events:
                    yield self._clean(event)
        except ProviderError as exc:
            _scrub(exc, self.redact)
            raise

    def _clean(self, event: StreamEvent) -> StreamEvent:
        if isinstance(event, RetryScheduled):
            return msgspec.structs.replace(event, error=self.redact(event.error))
        if isinstance(event, ReplyDone) and event.message.error_message:
            text = self.redact(event.message.error_message)
            return ReplyDone(msgspec.structs.replace(event.message, error_message=text))
        return event

    async def aclose(self) -> None:
        await self.inner.aclose()


def redacting(provider: Provider, secrets: Sequence[str | None]) -> Provider:
    """``provider`` wrapped once (wrapping a wrapped provider returns it as it is)."""
    return provider if isinstance(provider, RedactingProvider) else RedactingProvider(provider, secrets)


def _scrub(exc: BaseException, redact: Redactor) -> None:
    """Redact the error and every exception chained to it, in place (the same objects are raised on)."""
    seen: set[int] = set()
    current: BaseException | None = exc
    while current is not None and id(current) not in seen:
        seen.add(id(current))
        if isinstance(current, ProviderError):
            current.message = redact(current.message)
        current.args = tuple(redact(a) if isinstance(a, str) else a for a in current.args)
        current = current.__cause__ or current.__context__
