"""The history: the messages the next model call will see.

The loop appends; the controller replaces the whole list only for compaction or a new session.
Listeners (the session store, the UI) hear every change as it happens, so nothing is written late.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from typing import Literal, Protocol

import msgspec

from ink.ai.messages import AssistantMessage, Message, ToolCall, ToolResult
from ink.ai.unicode import sendable_message


class HistoryChange(msgspec.Struct, frozen=True):
    """``appended``: ``messages`` holds the one new message. ``replaced``: the whole new list."""

    kind: Literal["appended", "replaced"]
    messages: tuple[Message, ...]
    reason: str = ""


HistoryListener = Callable[[HistoryChange], None]


class HistoryView(Protocol):
    """The history as a tool call sees it (``ToolCallContext.history``): to read, never to change."""

    @property
    def messages(self) -> Sequence[Message]: ...

    def __len__(self) -> int: ...


class History:
    """Every message is made sendable as it enters (``ink.ai.unicode``): text that cannot be encoded as
    UTF-8 never reaches a request, whatever it came from (a tool, the user, a model, a session file)."""

    def __init__(self, messages: Iterable[Message] = ()) -> None:
        self._messages: list[Message] = [sendable_message(m) for m in messages]
        self._listeners: list[HistoryListener] = []

    @property
    def messages(self) -> Sequence[Message]:
        return tuple(self._messages)

    def __len__(self) -> int:
        return len(self._messages)

    def append(self, message: Message) -> None:
        message = sendable_message(message)
        self._messages.append(message)
        self._notify(HistoryChange("appended", (message,)))

    def replace(self, messages: Iterable[Message], reason: str) -> None:
        self._messages = [sendable_message(m) for m in messages]
        self._notify(HistoryChange("replaced", tuple(self._messages), reason))

    def unanswered_calls(self) -> list[ToolCall]:
        """Tool calls of the last assistant message that have no result after it: what a run that
        failed in the middle of a batch leaves behind, and must answer before the next request (R19)."""
        for index in range(len(self._messages) - 1, -1, -1):
            message = self._messages[index]
            if isinstance(message, AssistantMessage):
                answered = {m.tool_call_id for m in self._messages[index + 1 :] if isinstance(m, ToolResult)}
                return [call for call in message.tool_calls if call.id not in answered]
        return []

    def subscribe(self, listener: HistoryListener) -> Callable[[], None]:
        self._listeners.append(listener)
        return lambda: self._listeners.remove(listener)

    def _notify(self, change: HistoryChange) -> None:
        for listener in tuple(self._listeners):
            listener(change)
