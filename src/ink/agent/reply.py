"""Streaming one model reply into events and a message, abortable at any chunk (R1, R17, R19)."""

from __future__ import annotations

from collections.abc import AsyncGenerator
from contextlib import aclosing

import msgspec
from msgspec.structs import replace

from ink.agent.abort import AbortSignal, run_unless_aborted
from ink.agent.events import (
    Emit,
    MessageEnd,
    MessageStart,
    RetryEvent,
    TextDeltaEvent,
    ThinkingDeltaEvent,
)
from ink.agent.tasks import Tasks
from ink.ai.assembly import MessageBuilder
from ink.ai.errors import BadResponse, ProviderError
from ink.ai.estimate import estimated_usage
from ink.ai.messages import AssistantMessage, StopReason
from ink.ai.models import priced
from ink.ai.provider import ModelRequest, Provider
from ink.ai.stream import ReplyDone, RetryScheduled, StreamEvent, TextDelta, ThinkingDelta, ToolCallReady


class ReplyOutcome(msgspec.Struct, frozen=True):
    """``message`` is None when nothing arrived; ``error`` is set when the provider failed."""

    message: AssistantMessage | None
    error: ProviderError | None = None


class _Partial(MessageBuilder):
    """The reply as far as it arrived (text and thinking in order, only the calls that are whole),
    whether ``message_start`` went out, and the provider's own message once the reply is done."""

    def __init__(self, model: str, provider: str) -> None:
        super().__init__(model, provider)
        self.done: AssistantMessage | None = None
        self.started = False


async def stream_reply(
    provider: Provider, request: ModelRequest, signal: AbortSignal, emit: Emit, *, tasks: Tasks
) -> ReplyOutcome:
    """Stream one reply, emitting events as chunks arrive. Never raises a ``ProviderError``: it is
    returned with whatever part of the message had arrived. On abort the stream task is cancelled, which
    closes the connection, and the partial message comes back with ``stop_reason="aborted"``. What the
    stream sends after the reply is complete is read by a task of ``tasks``."""
    partial = _Partial(request.model, provider.name)

    async def consume() -> None:
        stream: AsyncGenerator[StreamEvent, None] | None = provider.stream(request)
        assert stream is not None
        try:
            async for event in stream:
                if _take(event, partial, emit):
                    _finish_in_background(stream, tasks)  # the reply is whole: nothing waits for the rest
                    stream = None
                    return
        finally:
            if stream is not None:  # failed or cancelled: close the response now, not at GC
                await stream.aclose()

    error: ProviderError | None = None
    try:
        outcome = await run_unless_aborted(consume(), signal)
    except ProviderError as exc:
        error = exc
    else:
        if outcome.aborted:
            return _cut_off(partial, request, "aborted", None, emit)
        if partial.done is None:
            error = BadResponse("the stream ended without a complete reply", provider=provider.name)
    if error is not None:
        return _cut_off(partial, request, "error", error, emit)
    assert partial.done is not None
    if not partial.started:
        emit(MessageStart())
    emit(MessageEnd(partial.done, partial.done.usage))
    return ReplyOutcome(partial.done)


def _cut_off(
    partial: _Partial, request: ModelRequest, stop: StopReason, error: ProviderError | None, emit: Emit
) -> ReplyOutcome:
    """Finish a reply that did not arrive whole; its started ``message_start`` always gets its end. Its
    usage never came: it is estimated (and marked so) when the request reached the service."""
    message = partial.message(stop, str(error) if error else None)
    if partial.started:
        message = replace(message, usage=priced(estimated_usage(request, message), message.model))
        emit(MessageEnd(message, message.usage))
    return ReplyOutcome(message if partial.blocks else None, error)


def _take(event: StreamEvent, partial: _Partial, emit: Emit) -> bool:
    """Record one stream event and announce it; True when it completes the reply."""
    if not partial.started and not isinstance(event, RetryScheduled):
        partial.started = True
        emit(MessageStart())
    match event:
        case TextDelta(text=text):
            partial.add_text(text)
            emit(TextDeltaEvent(text))
        case ThinkingDelta(text=text, signature=signature):
            if text:
                partial.add_thinking(text)
                emit(ThinkingDeltaEvent(text))
            if signature:
                partial.sign_thinking(signature)
        case ToolCallReady(call=call):
            partial.add_call(call)
        case RetryScheduled(attempt=attempt, delay_seconds=delay, error=error):
            emit(RetryEvent(attempt, delay, error))
        case ReplyDone(message=message):
            partial.done = message
            return True
    return False


def _finish_in_background(stream: AsyncGenerator[StreamEvent, None], tasks: Tasks) -> None:
    """Let the provider read what follows the reply's last event (so the connection goes back to the
    pool for the next call) without holding up ``message_end`` or the tools: a server that keeps the
    stream open costs only the provider's own bounded drain, off the run's path."""

    async def finish() -> None:
        try:
            async with aclosing(stream):
                async for _ in stream:
                    pass
        except ProviderError:
            pass  # the reply was already complete

    tasks.spawn(finish(), "reply drain")
