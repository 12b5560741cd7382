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
from ink.ai.assembly import GrowingBlocks
from ink.ai.errors import BadResponse, ProviderError
from ink.ai.messages import AssistantBlock, AssistantMessage, StopReason, TextBlock, ThinkingBlock, ToolCall
from ink.ai.provider import ModelRequest, Provider
from ink.ai.stream import ReplyDone, RetryScheduled, TextDelta, ThinkingDelta, ToolCallReady


@dataclass(frozen=True, slots=True)
class ReplyOutcome:
    """``message`` is None when nothing arrived; ``error`` is set when the provider failed."""

    message: AssistantMessage | None
    error: ProviderError | None = None


class _Partial:
    """The reply as far as it arrived: text and thinking in order, and only the calls that are whole."""

    def __init__(self) -> None:
        self._growing = GrowingBlocks()
        self.done: AssistantMessage | None = None
        self.started = False

    @property
    def blocks(self) -> list[AssistantBlock]:
        return self._growing.blocks

    def add_text(self, text: str) -> None:
        if isinstance(self._growing.last(), TextBlock):
            self._growing.grow(text)
        else:
            self._growing.append(TextBlock(text))

    def add_thinking(self, text: str, signature: str | None) -> None:
        last = self._growing.last()
        if not isinstance(last, ThinkingBlock):
            self._growing.append(ThinkingBlock(text, signature))
            return
        if signature and signature != last.signature:
            joined = self._growing.blocks[-1]
            assert isinstance(joined, ThinkingBlock)
            self._growing.set(-1, ThinkingBlock(joined.thinking, signature))
        self._growing.grow(text)

    def add_call(self, call: ToolCall) -> None:
        self._growing.append(call)


async def stream_reply(
    provider: Provider, request: ModelRequest, signal: AbortSignal, emit: Emit
) -> ReplyOutcome:
    """Stream one reply, emitting events as chunks arrive. Never raises a ``ProviderError``: it is
    returned with whatever part of the message had arrived. On abort the stream task is cancelled, which
    closes the connection, and the partial message comes back with ``stop_reason="aborted"``."""
    partial = _Partial()

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
                    partial.add_thinking(text, signature)
                    if text:
                        emit(ThinkingDeltaEvent(text))
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
            return _cut_off(partial, "aborted", request, provider.name, None, emit)
        if partial.done is None:
            error = BadResponse("the stream ended without a complete reply", provider=provider.name)
    if error is not None:
        return _cut_off(partial, "error", request, provider.name, error, emit)
    assert partial.done is not None
    if not partial.started:
        emit(MessageStart())
    emit(MessageEnd(partial.done, partial.done.usage))
    return ReplyOutcome(partial.done)


def _cut_off(
    partial: _Partial,
    stop: StopReason,
    request: ModelRequest,
    provider: str,
    error: ProviderError | None,
    emit: Emit,
) -> ReplyOutcome:
    """Finish a reply that did not arrive whole; its started ``message_start`` always gets its end."""
    message = AssistantMessage(
        tuple(partial.blocks), stop, request.model, provider, error_message=str(error) if error else None
    )
    if partial.started:
        emit(MessageEnd(message, message.usage))
    return ReplyOutcome(message if partial.blocks else None, error)
