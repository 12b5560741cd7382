"""The seam between the agent and a model service."""

from __future__ import annotations

from collections.abc import AsyncGenerator, Mapping, Sequence
from typing import Any, Protocol

import msgspec

from ink.ai.messages import Message
from ink.ai.stream import StreamEvent


class ToolSpec(msgspec.Struct, frozen=True):
    """What the model is told about a tool: its name, purpose and JSON schema of arguments."""

    name: str
    description: str
    parameters: Mapping[str, Any]


class ModelRequest(msgspec.Struct, frozen=True):
    """One request to the model: the conversation, the system prompt and the tools it may call."""

    model: str
    system: str
    messages: Sequence[Message]
    tools: Sequence[ToolSpec] = ()
    max_tokens: int = 8192
    options: Mapping[str, Any] = msgspec.field(default_factory=dict)


class Provider(Protocol):
    """Streams one model reply.

    ``stream`` yields ``StreamEvent`` objects and ends with one ``ReplyDone``. It raises a
    ``ProviderError`` subclass on failure (after its own retries, announced with ``RetryScheduled``).
    Cancelling the consuming task is the abort: the provider stops reading and closes the connection
    before the cancellation propagates. It never swallows ``CancelledError``.

    ``aclose`` releases what the provider holds (its HTTP connections); the app calls it once, at its
    end. Idempotent.
    """

    name: str

    def stream(self, request: ModelRequest) -> AsyncGenerator[StreamEvent, None]: ...

    async def aclose(self) -> None: ...
