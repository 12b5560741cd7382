"""Streaming one model reply into events and a message, abortable at any chunk (R1, R17, R19)."""

from __future__ import annotations

from dataclasses import dataclass

from ink.agent.abort import AbortSignal, run_unless_aborted
from ink.agent.events import (
    Emit,
    MessageEnd,
    MessageStart,
    RetryEvent,
    TextDeltaEvent,
    ThinkingDeltaEvent,
)
from ink.ai.assembly import MessageBuilder
from ink.ai.errors import BadResponse, ProviderError
from ink.ai.messages import AssistantMessage, StopReason
from ink.ai.provider import ModelRequest, Provider
from ink.ai.stream import ReplyDone, RetryScheduled, TextDelta, ThinkingDelta, ToolCallReady


@dataclass(frozen=True, slots=True)
class ReplyOutcome:
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
    provider: Provider, request: ModelRequest, signal: AbortSignal, emit: Emit
) -> ReplyOutcome:
    """Stream one reply, emitting events as chunks arrive. Never raises a ``ProviderError``: it is
    returned with whatever part of the message had arrived. On abort the stream task is cancelled, which
    closes the connection, and the partial message comes back with ``stop_reason="aborted"``."""
    partial = _Partial(request.model, provider.name)

    async def consume() -> None:
        async for event in provider.stream(request):
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

    error: ProviderError | None = None
    try:
        outcome = await run_unless_aborted(consume(), signal)
    except ProviderError as exc:
        error = exc
    else:
        if outcome.aborted:
            return _cut_off(partial, "aborted", None, emit)
        if partial.done is None:
            error = BadResponse("the stream ended without a complete reply", provider=provider.name)
    if error is not None:
        return _cut_off(partial, "error", error, emit)
    assert partial.done is not None
    if not partial.started:
        emit(MessageStart())
    emit(MessageEnd(partial.done, partial.done.usage))
    return ReplyOutcome(partial.done)


def _cut_off(partial: _Partial, stop: StopReason, error: ProviderError | None, emit: Emit) -> ReplyOutcome:
    """Finish a reply that did not arrive whole; its started ``message_start`` always gets its end."""
    message = partial.message(stop, str(error) if error else None)
    if partial.started:
        emit(MessageEnd(message, message.usage))
    return ReplyOutcome(message if partial.blocks else None, error)
