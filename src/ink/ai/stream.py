"""What a provider yields while a reply streams.

A provider turns one HTTP response into these events, in arrival order, and ends with exactly one
``ReplyDone`` carrying the whole message. ``ToolCallReady`` comes as soon as a call's arguments are
complete, so a consumer that is cancelled mid-reply knows which calls arrived whole (R19).
"""

from __future__ import annotations

from typing import Literal, TypeAlias

import msgspec

from ink.ai.messages import AssistantMessage, ToolCall


class TextDelta(msgspec.Struct, frozen=True):
    """A piece of the reply's text."""

    text: str
    type: Literal["text_delta"] = "text_delta"


class ThinkingDelta(msgspec.Struct, frozen=True):
    """A piece of the reply's reasoning, or (Anthropic) the signature of the reasoning block."""

    text: str
    signature: str | None = None
    type: Literal["thinking_delta"] = "thinking_delta"


class ToolCallReady(msgspec.Struct, frozen=True):
    """A tool call whose arguments have fully arrived."""

    call: ToolCall
    type: Literal["tool_call_ready"] = "tool_call_ready"


class RetryScheduled(msgspec.Struct, frozen=True):
    """The request failed before anything streamed and will be sent again after ``delay_seconds``."""

    attempt: int
    delay_seconds: float
    error: str
    type: Literal["retry"] = "retry"


class ReplyDone(msgspec.Struct, frozen=True):
    """The reply ended: the whole assistant message."""

    message: AssistantMessage
    type: Literal["reply_done"] = "reply_done"


StreamEvent: TypeAlias = TextDelta | ThinkingDelta | ToolCallReady | RetryScheduled | ReplyDone
